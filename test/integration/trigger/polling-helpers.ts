import { PollingWorkflow } from '../../harness/poller';
import { startTestbed, type Testbed } from '../../harness/testbed';
import type { SimulatorOptions } from '../../simulator';

export { allEventIds, itemsOf, jsonOf, keys, MINUTE } from '../../harness/polled-events';

/** A published Polling Trigger for `events`, with n8n's poll budget `budgetMs` when given. */
export function pollingWorkflow(bed: Testbed, events: string[] = ['*'], budgetMs?: number) {
	return new PollingWorkflow(bed.harness, bed.credential, { events }, budgetMs);
}

/** The first `count` assets that are not retired. */
export function assetIds(bed: Testbed, count: number): string[] {
	return bed.sim.data
		.assets()
		.filter((asset) => asset.status !== 'retired')
		.slice(0, count)
		.map((asset) => asset.assetId);
}

/** A testbed of its own for one test, closed after it. */
export async function withTestbed(
	options: SimulatorOptions,
	run: (bed: Testbed) => Promise<void>,
): Promise<void> {
	const bed = await startTestbed({ invoices: 5, assets: 5, ...options });
	try {
		await run(bed);
	} finally {
		await bed.close();
	}
}
