/**
 * The Polling Trigger's four invariants (docs/choosing-a-trigger.md), each under the condition
 * of issue 35 that broke it: a poll always makes progress, a settle never blocks a follow, a
 * change is its state and not its stamp, every bound is one. Each test asserts every change once:
 * none lost, none twice, none for no change made.
 */
import {
	expectEachOnce,
	HOUR,
	MINUTE,
	pollingWorkflow,
	pollUntilQuiet,
	withTestbed,
} from './polling-helpers';

jest.setTimeout(4 * 60_000);

function stampOf(ms: number): string {
	return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

describe('Polling Trigger invariants', () => {
	test('a baseline read over several polls while records listed at the start leave it: the others it was moving are still taken for listed at the start, never reported as issued', async () => {
		await withTestbed({}, async (bed) => {
			const { sim } = bed;
			sim.setListShape({ order: 'updatedAt' });
			const polling = pollingWorkflow(bed, ['invoice.issued', 'invoice.paid'], 1000);
			// Interleaved: invoices dated 10 days back (never reported as issued) and recent ones.
			const old = stampOf(sim.clock.now().getTime() - 10 * 24 * HOUR);
			const leaving = Array.from({ length: 600 }, () => {
				sim.issueInvoice();
				return sim.issueInvoice({ issueDate: old }).invoice.invoiceNumber;
			});
			sim.clock.advance(MINUTE);
			sim.faults.add({ route: 'invoices.list', latencyMs: 300 });
			await polling.activate();
			sim.clock.advance(2000);
			// Paid while the baseline is still being read: each leaves its place in the list.
			for (const number of leaving) sim.payInvoice(number);
			await pollUntilQuiet(polling, bed);
			expectEachOnce(
				polling,
				leaving.map((number) => `invoice.paid:${number}`),
			);
		});
	});
});
