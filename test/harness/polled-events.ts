/**
 * What a Polling Trigger reported, and the one check of every polling scenario: each change once
 * (0 lost, 0 twice, 0 for no change made). For the trigger over HTTP (poller.ts) and in process
 * (in-process-poller.ts) alike.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;

/** A change is listed within this long of its updatedAt (the contract). */
export const LISTED_WITHIN = 5 * MINUTE;

/** What one poll came to: the items it emitted (null: none), or the error n8n would show. */
export type PollOutcome = { items: INodeExecutionData[] | null } | { error: Error };

/** A published Polling Trigger: its polls, and the items of every execution they started, in order. */
export interface PolledTrigger {
	readonly executions: INodeExecutionData[][];
	poll(): Promise<PollOutcome>;
	savedStaticData(): IDataObject;
}

/** A service whose clock a test moves on, and where it issues invoices. */
export interface ChangingService {
	clock: { advance(ms: number): unknown };
	issueInvoice(input?: IDataObject): { invoice: { invoiceNumber: string } };
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
export function allEventIds(polling: Pick<PolledTrigger, 'executions'>): string[] {
	return polling.executions.flat().map((item) => String(item.json.eventId));
}

/**
 * Polls, advancing the service's clock `stepMs` after each, until no poll brought anything for
 * twice the listing bound (a change listed late has come by then), at most `polls` polls.
 */
export async function pollUntilQuiet(
	polling: Pick<PolledTrigger, 'poll'>,
	bed: { sim: ChangingService },
	stepMs = MINUTE,
	polls = 80,
) {
	const quietPolls = Math.ceil((2 * LISTED_WITHIN) / stepMs) + 1;
	let quiet = 0;
	for (let poll = 0; poll < polls && quiet < quietPolls; poll++) {
		quiet = itemsOf(await polling.poll()).length === 0 ? quiet + 1 : 0;
		bed.sim.clock.advance(stepMs);
	}
}

/**
 * Every expected change was reported once; nothing else was (lost, twice, for no change made).
 * `changeOf` names the change an eventId stands for (default: the eventId itself).
 */
export function expectEachOnce(
	polling: Pick<PolledTrigger, 'executions'>,
	expected: Iterable<string>,
	changeOf = (eventId: string) => eventId,
) {
	const ids = allEventIds(polling).map(changeOf);
	const wanted = new Set(expected);
	const seen = new Set<string>();
	const twice: string[] = [];
	for (const id of ids) {
		if (seen.has(id)) twice.push(id);
		seen.add(id);
	}
	const lost = [...wanted].filter((id) => !seen.has(id));
	const unexpected = ids.filter((id) => !wanted.has(id));
	expect({
		lost: lost.length,
		twice: twice.length,
		unexpected: unexpected.length,
		examples: [...lost, ...twice, ...unexpected].slice(0, 4),
	}).toEqual({ lost: 0, twice: 0, unexpected: 0, examples: [] });
}

/** `count` invoices issued now; their invoice.issued eventIds. */
export function issueMany(
	bed: { sim: ChangingService },
	count: number,
	input: IDataObject = {},
): string[] {
	return Array.from(
		{ length: count },
		() => `invoice.issued:${bed.sim.issueInvoice(input).invoice.invoiceNumber}`,
	);
}

/** How many record states the trigger keeps in its saved static data, per record kind. */
export function storedStates(polling: Pick<PolledTrigger, 'savedStaticData'>): number[] {
	const kinds = Object.values((polling.savedStaticData().pollState ?? {}) as IDataObject);
	return kinds.map((kind) =>
		Object.values(((kind as IDataObject).seen ?? {}) as IDataObject).reduce<number>(
			(sum, states) =>
				sum + (Array.isArray(states) ? states.length : Object.keys(states as object).length),
			0,
		),
	);
}
