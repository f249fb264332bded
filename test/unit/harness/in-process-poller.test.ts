/**
 * The in-process Polling Trigger (test/harness/in-process-poller.ts): its requests go through the
 * transport's own retry policy on simulated time, an attempt that hangs ends as n8n's request
 * helper ends it, and the static data is saved when n8n saves it.
 */
import { NodeApiError } from 'n8n-workflow';

import { DEADLINE_GRACE_MS } from '../../../nodes/InvoicingAssets/transport/retry';
import { inProcessBed, InProcessTrigger } from '../../harness/in-process-poller';
import { itemsOf, keys, MINUTE } from '../../harness/polled-events';

test('a 429 with Retry-After is waited out in simulated time by the transport’s retry policy', async () => {
	const bed = inProcessBed({ invoices: 5, assets: 5 });
	const polling = new InProcessTrigger(bed, { events: ['invoice.issued'], budgetMs: 10_000 });
	await polling.activate();
	bed.sim.clock.advance(MINUTE);
	const issued = bed.sim.issueInvoice().invoice.invoiceNumber;
	bed.sim.faults.add({ route: 'invoices.list', status: 429, retryAfter: 2, times: 1 });
	const before = bed.sim.log.count('invoices.list');
	expect(keys(itemsOf(await polling.poll()))).toEqual([`invoice.issued:${issued}`]);
	expect(polling.durations.at(-1)).toBeGreaterThanOrEqual(2000);
	expect(polling.durations.at(-1)).toBeLessThan(3000);
	expect(bed.sim.log.count('invoices.list') - before).toBeGreaterThanOrEqual(2);
});

test('a list request that hangs is given up 1.5 s after the poll’s budget, and the poll fails as n8n would show it', async () => {
	const bed = inProcessBed({ invoices: 5, assets: 5 });
	const polling = new InProcessTrigger(bed, { events: ['invoice.issued'], budgetMs: 1000 });
	await polling.activate();
	bed.sim.faults.add({ route: 'invoices.list', latencyMs: 60_000, times: 1 });
	const outcome = await polling.poll();
	expect('error' in outcome && outcome.error).toBeInstanceOf(NodeApiError);
	expect(polling.durations.at(-1)).toBe(1000 + DEADLINE_GRACE_MS);
	expect(itemsOf(await polling.poll())).toEqual([]);
});

test('static data: saved when a poll emits, or (durable) whenever a poll changed it; a restart reloads what was saved', async () => {
	for (const durable of [false, true]) {
		const bed = inProcessBed({ invoices: 5, assets: 5 });
		const polling = new InProcessTrigger(bed, { events: ['invoice.issued'], durable });
		await polling.activate();
		const saved = () => JSON.stringify(polling.savedStaticData());
		const activated = saved();
		bed.sim.clock.advance(10 * MINUTE);
		itemsOf(await polling.poll());
		// A poll that emits nothing moved the positions: only the durable scheduler commits that.
		expect([durable, saved() === activated]).toEqual([durable, !durable]);
		const issued = bed.sim.issueInvoice().invoice.invoiceNumber;
		expect(keys(itemsOf(await polling.poll()))).toEqual([`invoice.issued:${issued}`]);
		const reported = saved();
		expect(reported).not.toBe(activated);
		await polling.restart();
		expect(itemsOf(await polling.poll())).toEqual([]);
		expect(polling.executions).toHaveLength(1);
	}
});

test('the same scenario gives the same polls every run: faults by probability, retry jitter and all', async () => {
	const scenario = async () => {
		const bed = inProcessBed({ invoices: 5, assets: 20 });
		const polling = new InProcessTrigger(bed, { events: ['*'], budgetMs: 3000 });
		await polling.activate();
		bed.sim.faults.add({ route: 'invoices.list', status: 503, probability: 0.3 });
		bed.sim.faults.add({ route: 'assets.list', drop: true, probability: 0.2 });
		for (let poll = 0; poll < 10; poll++) {
			bed.sim.clock.advance(MINUTE);
			bed.sim.issueInvoice();
			await polling.poll();
		}
		return {
			requests: bed.sim.log.entries().map(({ receivedAtMs, query, status }) => ({
				receivedAtMs,
				query,
				status,
			})),
			durations: polling.durations,
			saved: polling.savedStaticData(),
		};
	};
	const first = await scenario();
	expect(new Set(first.requests.map((request) => request.status))).toEqual(
		new Set([200, 503, null]),
	);
	expect(await scenario()).toEqual(first);
});
