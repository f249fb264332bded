/**
 * The Polling Trigger at month-end: a billing run issues thousands of invoices within a second,
 * thousands get paid, the service lists some changes late. Each condition runs published polls
 * against the simulator until nothing more comes, and asserts that every change started the
 * workflow once: 0 lost, 0 twice.
 */
import { PollingWorkflow } from '../../harness/poller';
import type { Testbed } from '../../harness/testbed';
import {
	expectEachOnce,
	issueMany,
	MINUTE,
	pollingWorkflow,
	pollUntilQuiet,
	withTestbed,
} from './polling-helpers';

jest.setTimeout(4 * 60_000);

/** A published trigger for invoice.issued with a 1 s budget, and `count` invoices issued a minute on. */
async function burstAfterBaseline(bed: Testbed, count: number) {
	const polling = pollingWorkflow(bed, ['invoice.issued'], 1000);
	await polling.activate();
	bed.sim.clock.advance(MINUTE);
	return { polling, expected: issueMany(bed, count) };
}

describe('Polling Trigger at month-end', () => {
	test('a poll whose list request hangs ends within 1.5 s of its budget, stores nothing, and does not stop the next poll; each change once', async () => {
		await withTestbed({}, async (bed) => {
			const { sim } = bed;
			const { polling, expected } = await burstAfterBaseline(bed, 50);
			const saved = JSON.stringify(polling.savedStaticData());
			sim.faults.add({ route: 'invoices.list', latencyMs: 8000, times: 1 });
			const started = Date.now();
			const hung = await polling.poll();
			expect(Date.now() - started).toBeLessThanOrEqual(1000 + 1500 + 500);
			expect('error' in hung).toBe(true);
			expect(JSON.stringify(polling.savedStaticData())).toBe(saved);
			const next = await polling.poll();
			if ('error' in next) throw next.error;
			expect(next.items).toHaveLength(50);
			await pollUntilQuiet(polling, bed);
			expectEachOnce(polling, expected);
		});
	});

	test('on n8n’s durable scheduler, a poll that starts before the last reporting poll’s static data landed reports nothing again', async () => {
		await withTestbed({}, async (bed) => {
			const { sim } = bed;
			const polling = new PollingWorkflow(
				bed.harness,
				bed.credential,
				{ events: ['invoice.issued'] },
				5000,
				true,
			);
			await polling.activate();
			sim.clock.advance(MINUTE);
			await polling.poll();
			const first = issueMany(bed, 30);
			const reporting = await polling.poll(true);
			expect('items' in reporting && reporting.items).toHaveLength(30);
			// n8n has not saved it yet: the next poll reads the static data before it.
			expect(await polling.poll()).toEqual({ items: null });
			polling.commitHeld();
			const second = issueMany(bed, 5);
			await pollUntilQuiet(polling, bed);
			expectEachOnce(polling, [...first, ...second]);
		});
	});
});
