/**
 * The Polling Trigger within n8n's poll budget (issue 20). Nothing here is timed on the wall
 * clock, so a busy machine cannot turn it red.
 */
import type { IDataObject } from 'n8n-workflow';

import { POLL_BUDGET_REACHES_THE_NODE, testNeeding2x } from '../../harness/engine';
import { startTestbed, type Testbed } from '../../harness/testbed';
import { pollingWorkflow } from './polling-helpers';

jest.setTimeout(3 * 60_000);

let bed: Testbed;

beforeAll(async () => {
	bed = await startTestbed({ invoices: 10, assets: 300 });
});

afterAll(async () => {
	await bed.close();
});

testNeeding2x(POLL_BUDGET_REACHES_THE_NODE)(
	'with a budget shorter than any list request, every poll still moves on: changes come with every poll but one until all came',
	async () => {
		const { sim } = bed;
		sim.faults.clear();
		// The baseline (the first test's 4,000 invoices among it) is taken within n8n's default
		// budget. Then 1 ms, over before any answer however fast or busy the machine: each poll reads
		// only what a poll reads without time left (its first step), so what it reads never varies.
		const polling = pollingWorkflow(bed, ['invoice.issued']);
		await polling.activate();
		polling.pollBudgetMs = 1;
		const expected = new Set<string>();
		for (let change = 0; change < 300; change++) {
			sim.clock.advance(4000);
			expected.add(`invoice.issued:${sim.issueInvoice().invoice.invoiceNumber}`);
		}
		sim.clock.advance(10 * 60_000);
		const perPoll: number[] = [];
		const reported = () => polling.executions.flat().length;
		while (reported() < expected.size && perPoll.length < 40) {
			const before = reported();
			const outcome = await polling.poll();
			if ('error' in outcome) throw outcome.error;
			perPoll.push(reported() - before);
		}
		// Every poll reads on. One may bring nothing new: the service's clock jumped 30 minutes
		// since the last poll, so the first page it reads is planned by the clock it knew (a follow
		// read), and read again by the settle read the service's time then calls for.
		expect(perPoll.filter((count) => count === 0).length).toBeLessThanOrEqual(1);
		expect(perPoll.length).toBeGreaterThan(1);
		const ids = polling.executions.flat().map((item) => String((item.json as IDataObject).eventId));
		expect(ids.length).toBe(new Set(ids).size);
		expect(new Set(ids)).toEqual(expected);
	},
);
