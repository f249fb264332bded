import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { PollingWorkflow, type PollOutcome } from '../../harness/poller';
import { startTestbed, type Testbed } from '../../harness/testbed';
import type { SimulatorOptions } from '../../simulator';

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;

/** A published Polling Trigger for `events`, with n8n's poll budget `budgetMs` when given. */
export function pollingWorkflow(bed: Testbed, events: string[] = ['*'], budgetMs?: number) {
	return new PollingWorkflow(bed.harness, bed.credential, { events }, budgetMs);
}

export function jsonOf(items: INodeExecutionData[] | null): IDataObject[] {
	return (items ?? []).map((item) => item.json);
}

/** The items of a poll; its error is thrown. */
export function itemsOf(outcome: PollOutcome): IDataObject[] {
	if ('error' in outcome) throw outcome.error;
	return jsonOf(outcome.items);
}

/** eventType:record for each item, to compare what was reported. */
export function keys(items: IDataObject[]): string[] {
	return items.map((item) => {
		const data = item.data as IDataObject;
		return `${String(item.eventType)}:${String(data.invoiceNumber ?? data.assetId)}`;
	});
}

/** Every eventId the workflow's executions carried, across all polls, in order. */
export function allEventIds(polling: PollingWorkflow): string[] {
	return polling.executions.flat().map((item) => String(item.json.eventId));
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
