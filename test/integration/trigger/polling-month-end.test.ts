/**
 * The Polling Trigger at month-end: a billing run issues thousands of invoices within a second,
 * thousands get paid, the service lists some changes late. Each condition runs published polls
 * against the simulator until nothing more comes, and asserts that every change started the
 * workflow once: 0 lost, 0 twice.
 */
import { PollingWorkflow } from '../../harness/poller';

import { expectEachOnce, issueMany, MINUTE, pollUntilQuiet, withTestbed } from './polling-helpers';

jest.setTimeout(4 * 60_000);

describe('Polling Trigger at month-end', () => {
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
