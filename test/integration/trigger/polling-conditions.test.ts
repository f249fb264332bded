/**
 * The Polling Trigger under the conditions real services create (issue 20): records changed
 * twice within a second, invoices listed long after their issueDate or with an issueDate of
 * another form, edits after a final state, lists without totalItems or in another order, stamps
 * the trigger cannot trust, overlapping polls and rate limits. Each change must start the
 * workflow once: nothing lost, nothing twice.
 */
import { POLL_BUDGET_REACHES_THE_NODE, testNeeding2x } from '../../harness/engine';
import { startTestbed, type Testbed } from '../../harness/testbed';
import { itemsOf, MINUTE, pollingWorkflow } from './polling-helpers';

let testbed: Testbed;

beforeAll(async () => {
	testbed = await startTestbed({ invoices: 30, assets: 40 });
});

afterAll(async () => {
	await testbed.close();
});

afterEach(() => {
	testbed.sim.faults.clear();
	testbed.sim.setListShape({});
});

function workflow(events: string[] = ['*'], bed: Testbed = testbed, budgetMs?: number) {
	return pollingWorkflow(bed, events, budgetMs);
}

describe('Polling Trigger: polls n8n runs side by side, and rate limits', () => {
	// n8n 1.x gives a poll no budget.
	testNeeding2x(POLL_BUDGET_REACHES_THE_NODE)(
		'a rate limit longer than the poll budget ends the poll at once, with the wait n8n 2.x backs off by',
		async () => {
			const { sim } = testbed;
			const polling = workflow(['invoice.issued'], testbed, 3000);
			await polling.activate();
			sim.clock.advance(MINUTE);
			const number = sim.issueInvoice().invoice.invoiceNumber;
			sim.faults.add({ route: 'invoices.list', status: 429, retryAfter: 10, times: 1 });
			const started = Date.now();
			const failed = await polling.poll();
			expect(Date.now() - started).toBeLessThan(3000 + 2000);
			if (!('error' in failed)) throw new Error('The poll did not fail');
			expect(failed.error).toMatchObject({
				httpCode: '429',
				failure: { cause: 'rate-limited', retryAfterMs: 10_000 },
			});
			expect(itemsOf(await polling.poll()).map((item) => item.eventId)).toEqual([
				`invoice.issued:${number}`,
			]);
		},
	);
});
