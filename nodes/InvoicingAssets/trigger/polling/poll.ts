import type { IDataObject, INodeExecutionData, IPollFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { ServiceClient } from '../../transport';
import {
	MAX_PAGE_SIZE,
	paths,
	toServiceTimestamp,
	type Asset,
	type AssetFilters,
	type Invoice,
	type InvoiceFilters,
} from '../../transport/contract';
import { readPages } from '../../transport/pageReader';
import { readServiceTime } from '../../transport/responses';
import { ALL_EVENTS, CHOOSE_EVENT_TYPES } from '../../shared/events';
import {
	baselineState,
	byOccurrence,
	ChangeMemory,
	KIND_OF_EVENT,
	OVERLAP_MS,
	POLLABLE_EVENT_TYPES,
	readKindState,
	testEventOf,
	type PollableEventType,
	type PolledEvent,
	type PolledRecord,
	type RecordKind,
} from './changes';
import { WindowReader, type PollBudget } from './windows';

/** Where the trigger keeps its state in the node's static data. */
const STATE_KEY = 'pollState';

/** How long a poll may take when n8n does not say (n8n before 2.38). */
export const DEFAULT_POLL_BUDGET_MS = 30_000;

/** At most this many records are held in memory by one poll (the windows are planned by it). */
export const MAX_RECORDS_PER_POLL = 10_000;

/**
 * Fetch Test Event looks this far back (by the service's clock) for a record, then at any record:
 * the newest first, since a page holds the newest of a window only when it holds the window whole.
 */
const TEST_EVENT_LOOKBACK_MS = [5 * 60_000, 24 * 60 * 60_000, 30 * 24 * 60 * 60_000];

/**
 * Polls of a trigger running in this n8n process. n8n's legacy scheduler lets polls of one
 * trigger overlap; a poll that finds another still running reports nothing and leaves the
 * position to it.
 */
const running = new Set<string>();

/**
 * poll(): reports each change since the last poll once, within n8n's poll budget. Each record
 * kind is read window by window (see windows.ts); a window read completely moves the position
 * on. A failure ends the poll: the changes of the windows read before it are reported (and the
 * next poll starts at the failed one), and a poll that has none to report fails with the error.
 */
export async function pollChanges(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
	const wanted = readWantedEvents(this);
	const kinds = [
		...new Set([...wanted].map((eventType) => KIND_OF_EVENT[eventType as PollableEventType])),
	];
	const client = new ServiceClient(this);
	if (this.getMode() === 'manual') return await fetchTestEvent(this, client, kinds, wanted);

	const key = `${this.getWorkflow().id ?? ''}:${this.getNode().id}`;
	if (running.has(key)) return null;
	running.add(key);
	try {
		return await pollWithinBudget(this, client, kinds, wanted);
	} finally {
		running.delete(key);
	}
}

async function pollWithinBudget(
	context: IPollFunctions,
	client: ServiceClient,
	kinds: RecordKind[],
	wanted: Set<string>,
): Promise<INodeExecutionData[][] | null> {
	const deadline = Date.now() + pollBudgetMs(context);
	let records = MAX_RECORDS_PER_POLL;
	const staticData = context.getWorkflowStaticData('node');
	const stored = (staticData[STATE_KEY] ?? {}) as IDataObject;
	const memories = new Map<RecordKind, { memory: ChangeMemory; report: boolean }>();
	const events: PolledEvent[] = [];
	let failure: unknown;
	let progressOwed = true;
	// Each kind may take its share of the time left, so that one kind's backlog never stops the
	// other; the kind furthest behind goes first, and what a kind leaves unused goes, in a second
	// round, to the kinds not read up to now. Every poll reads at least one window completely.
	let unread = [...kinds].sort((a, b) => settledOf(stored[a]) - settledOf(stored[b]));
	for (let round = 0; round < 2 && unread.length > 0 && failure === undefined; round++) {
		const stillUnread: RecordKind[] = [];
		for (const [index, kind] of unread.entries()) {
			const share = (deadline - Date.now()) / (unread.length - index);
			const budget: PollBudget = { deadline: Date.now() + share, records };
			const reader = new WindowReader(context, client, kind, budget);
			try {
				let known = memories.get(kind);
				if (!known) {
					const state = readKindState(stored[kind]);
					if (state) {
						known = { memory: new ChangeMemory(state), report: true };
					} else {
						// The baseline: what changed from its moment on is remembered, not reported.
						const { at, records: seen } = await reader.baseline();
						const memory = new ChangeMemory(baselineState(at));
						if (seen) {
							memory.take(
								{ from: memory.settledAt, serviceNow: at, tolerance: OVERLAP_MS, records: seen },
								wanted,
								false,
							);
							memories.set(kind, { memory, report: true });
							progressOwed = false;
							continue;
						}
						known = { memory, report: false };
					}
					memories.set(kind, known);
				}
				const { memory, report } = known;
				const before = memory.settledAt;
				const readToNow = await reader.drain(
					() => memory.settledAt,
					(window) => events.push(...memory.take(window, wanted, report)),
					progressOwed,
				);
				if (memory.settledAt > before || readToNow) progressOwed = false;
				if (!readToNow) stillUnread.push(kind);
			} catch (error) {
				failure = error;
				break;
			} finally {
				records = budget.records;
			}
		}
		unread = stillUnread;
	}
	if (failure !== undefined && events.length === 0) throw failure;
	if (failure !== undefined) {
		context.logger.warn(
			`Invoicing & Assets Polling Trigger: a poll stopped early (${(failure as Error).message}); its changes read so far are reported, the next poll goes on from there`,
		);
	}
	// Only now, with what was read completely, does the position move on; kinds no longer
	// chosen are forgotten (chosen again, they start with a baseline of their own).
	const next: IDataObject = {};
	for (const kind of kinds) {
		const state = memories.get(kind)?.memory.state() ?? stored[kind];
		if (state !== undefined) next[kind] = state as IDataObject;
	}
	staticData[STATE_KEY] = next;
	if (events.length === 0) return null;
	events.sort(byOccurrence);
	return [context.helpers.returnJsonArray(events as unknown as IDataObject[])];
}

/** Where a stored kind stands (epoch ms); a kind without state (a baseline to take) first. */
function settledOf(stored: unknown): number {
	const state = readKindState(stored);
	return state ? (readServiceTime(state.settled) ?? 0) : Number.NEGATIVE_INFINITY;
}

/**
 * How long this poll may take: n8n's poll budget (2.38 and later; the durable scheduler abandons
 * a poll that runs longer), else DEFAULT_POLL_BUDGET_MS.
 */
function pollBudgetMs(context: IPollFunctions): number {
	const budget = (context as Partial<Pick<IPollFunctions, 'getPollBudgetMs'>>).getPollBudgetMs?.();
	return typeof budget === 'number' && Number.isFinite(budget) && budget > 0
		? budget
		: DEFAULT_POLL_BUDGET_MS;
}

function readWantedEvents(context: IPollFunctions): Set<string> {
	const value = context.getNodeParameter('events', []) as unknown;
	const chosen = (Array.isArray(value) ? value : [value]).filter(
		(entry): entry is string => typeof entry === 'string' && entry !== '',
	);
	const wanted = chosen.includes(ALL_EVENTS)
		? new Set<string>(POLLABLE_EVENT_TYPES)
		: new Set(
				chosen.filter((entry) => (POLLABLE_EVENT_TYPES as readonly string[]).includes(entry)),
			);
	if (wanted.size === 0) {
		throw new NodeOperationError(context.getNode(), 'No event is selected', {
			description: `In Events, ${CHOOSE_EVENT_TYPES}. The Polling Trigger can see: ${POLLABLE_EVENT_TYPES.join(', ')}.`,
		});
	}
	return wanted;
}

/**
 * Fetch Test Event: a recent record that matches a selected event, as the trigger would report
 * it; the position is left untouched. It asks for the service's time, then per record kind for
 * one page of the records changed in the last 5 minutes, day, 30 days, then of any, and stops at
 * the first page with a match: one request, then at most 4 per kind, each of one page.
 */
async function fetchTestEvent(
	context: IPollFunctions,
	client: ServiceClient,
	kinds: RecordKind[],
	wanted: Set<string>,
): Promise<INodeExecutionData[][]> {
	const { now } = await new WindowReader(context, client, kinds[0], {
		deadline: Date.now() + DEFAULT_POLL_BUDGET_MS,
		records: 0,
	}).serviceTime();
	const newestOfKind = async (kind: RecordKind) => {
		for (const lookBack of [...TEST_EVENT_LOOKBACK_MS, undefined]) {
			const changedSince: Pick<InvoiceFilters & AssetFilters, 'updatedFrom'> =
				lookBack === undefined ? {} : { updatedFrom: toServiceTimestamp(new Date(now - lookBack)) };
			const pages = readPages<Invoice | Asset>(client, {
				path: kind === 'invoice' ? paths.invoices : paths.assets,
				qs: changedSince,
				limit: MAX_PAGE_SIZE,
				pagesInFlight: 1,
			});
			let newest: { event: PolledEvent; at: number } | undefined;
			for await (const page of pages) {
				for (const record of page.records) {
					const event = testEventOf({ kind, record } as PolledRecord, wanted);
					const at = readServiceTime(record.updatedAt) ?? Number.NEGATIVE_INFINITY;
					if (event && (!newest || at > newest.at)) newest = { event, at };
				}
			}
			if (newest) return newest;
		}
		return undefined;
	};
	let newest: { event: PolledEvent; at: number } | undefined;
	for (const kind of kinds) {
		const found = await newestOfKind(kind);
		if (found && (!newest || found.at > newest.at)) newest = found;
	}
	if (newest) return [context.helpers.returnJsonArray([newest.event as unknown as IDataObject])];
	throw new NodeOperationError(context.getNode(), 'No record matches the selected events yet', {
		description:
			'The service has no invoice or managed asset for the events chosen in Events. Choose more events, or issue an invoice first, then fetch a test event again.',
	});
}
