import type { IDataObject, INodeExecutionData, IPollFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { ServiceClient } from '../../transport';
import { FIRST_PAGE, MAX_PAGE_SIZE } from '../../transport/contract';
import { readServiceTime } from '../../transport/responses';
import { CHOOSE_EVENT_TYPES, selectedEventTypes } from '../../shared/events';
import {
	byOccurrence,
	DAY_MS,
	eventsOf,
	digestOf,
	floorSecond,
	kindOf,
	POLLABLE_EVENT_TYPES,
	recordId,
	SECOND_MS,
	type PolledEvent,
	type PolledRecord,
	type RecordKind,
} from './changes';
import {
	ISSUED_WITHIN_MS,
	KindMemory,
	LISTED_WITHIN_MS,
	MAX_SEEN_STATES,
	readStoredKind,
	timestampOf,
	type OpenWindow,
	type WindowPurpose,
} from './memory';
import { firstPage, PollClock, readWindow } from './reader';

/** Where the trigger keeps its state in the node's static data. */
const STATE_KEY = 'pollState';

/**
 * A poll takes n8n's poll budget (2.38 and later), at most this, since its changes reach the
 * workflow only when it returns (the legacy scheduler's budget is 5 minutes); else this.
 */
export const MAX_POLL_MS = 30_000;

/** A poll running this long past its budget may have been given up by n8n (which allows 9 s): it stores nothing. */
export const ABANDONED_AFTER_MS = 5_000;

/** At most this many windows per record kind in one poll: every window read moves a position on. */
const MAX_WINDOWS_PER_POLL = 8;

/** Fetch Test Event looks this far back, then at any record: a page holds a window's newest only when whole. */
const TEST_EVENT_LOOKBACK_MS = [5 * 60_000, DAY_MS, 30 * DAY_MS];

/** Polls of a trigger running in this n8n process, by workflow and node: who runs it, until when. */
const runningPolls = new Map<string, { poll: object; until: number }>();

/**
 * The last poll of a trigger in this process that reported changes: the state it read, and when.
 * n8n's durable scheduler saves such a poll's static data with its execution after the poll
 * returned, and may start the next poll before that landed: a poll that reads that same state
 * again waits, reporting nothing, for at most COMMIT_WAIT_MS, rather than report the same again.
 */
const reportingPolls = new Map<string, { from: unknown; at: number }>();
export const COMMIT_WAIT_MS = 60_000;

/**
 * poll(): reports each change once, within n8n's poll budget. Per record kind the trigger keeps
 * two positions (memory.ts): a cursor that follows new changes as soon as they are listed, and a
 * settled position behind it, up to which every change was read after it could no longer be
 * listed late. Each poll reads windows of the list (reader.ts) from them: a record state not read
 * before is reported as soon as it is read; a window too large for one poll goes on in the next.
 */
export async function pollChanges(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
	const wanted = readWantedEvents(this);
	const kinds = [...new Set([...wanted].map(kindOf))];
	const client = new ServiceClient(this);
	if (this.getMode() === 'manual') return await fetchTestEvent(this, client, kinds, wanted);

	// n8n's poll budget (2.38 and later; no such method before).
	const budget = (this as Partial<IPollFunctions>).getPollBudgetMs?.() || MAX_POLL_MS;
	const deadline = Date.now() + Math.min(budget, MAX_POLL_MS);
	const key = `${this.getWorkflow().id ?? ''}:${this.getNode().id}`;
	const running = runningPolls.get(key);
	// Polls that overlap (n8n's legacy scheduler): the one running goes on alone.
	if (running && running.until > Date.now()) return null;
	const poll = { poll: {}, until: deadline + ABANDONED_AFTER_MS };
	runningPolls.set(key, poll);
	try {
		const staticData = this.getWorkflowStaticData('node');
		const from = staticData.pollStateId;
		const reporting = reportingPolls.get(key);
		const waiting = from !== undefined && reporting?.from === from;
		if (waiting && Date.now() - (reporting?.at ?? 0) < COMMIT_WAIT_MS) return null;
		const stored = (staticData[STATE_KEY] ?? {}) as IDataObject;
		const { memories, events, failure } = await readChanges(client, kinds, stored, deadline);
		// A poll n8n may have given up: what it read is left to the next poll, which reads it again.
		if (runningPolls.get(key) !== poll || Date.now() > poll.until) return null;
		if (failure !== undefined && events.length === 0) throw failure;
		if (failure !== undefined) {
			this.logger.warn(
				`Invoicing & Assets Polling Trigger: a poll stopped early (${(failure as Error).message}); its changes read so far are reported, the next poll goes on from there`,
			);
		}
		// A kind a failure kept this poll from reading stays as it was; kinds no longer chosen are
		// forgotten (chosen again, they start with a baseline of their own).
		staticData[STATE_KEY] = Object.fromEntries(
			kinds.map((kind) => [kind, memories.get(kind)?.toJSON() ?? stored[kind]]),
		) as IDataObject;
		staticData.pollStateId = `${Date.now()}.${Math.random()}`;
		const reported = events.filter((event) => wanted.has(event.eventType)).sort(byOccurrence);
		if (reported.length === 0) return null;
		reportingPolls.set(key, { from, at: Date.now() });
		return [this.helpers.returnJsonArray(reported as unknown as IDataObject[])];
	} finally {
		if (runningPolls.get(key) === poll) runningPolls.delete(key);
	}
}

/**
 * Reads each kind's windows until the deadline. Each kind may take its share of the time left,
 * the kind furthest behind first; what a kind leaves unused goes, in a second round, to the kinds
 * not done. A failure ends the poll: the events read before it are kept.
 */
async function readChanges(
	client: ServiceClient,
	kinds: RecordKind[],
	stored: IDataObject,
	deadline: number,
) {
	const memories = new Map<RecordKind, KindMemory>();
	const events: PolledEvent[] = [];
	let failure: unknown;
	const storedKind = (kind: RecordKind) => readStoredKind(stored[kind]);
	// The service's clock as the last poll knew it, so that the first window is planned by it.
	const offset = kinds.map((kind) => storedKind(kind)?.clockOffset).find(Number.isFinite);
	const clock = new PollClock(deadline, offset);
	let unread = [...kinds].sort(
		(a, b) => (storedKind(a)?.settled ?? -Infinity) - (storedKind(b)?.settled ?? -Infinity),
	);
	for (let round = 0; round < 2 && unread.length > 0 && failure === undefined; round++) {
		const notDone: RecordKind[] = [];
		for (const [index, kind] of unread.entries()) {
			clock.deadline = Date.now() + (deadline - Date.now()) / (unread.length - index);
			try {
				const known = storedKind(kind);
				const memory =
					memories.get(kind) ??
					(known ? new KindMemory(known) : await startKind(client, kind, clock));
				memories.set(kind, memory);
				const done = await readKind(client, kind, memory, clock, events, round === 0);
				memory.clockOffset = clock.offset;
				if (!done) notDone.push(kind);
			} catch (error) {
				failure = error;
				break;
			}
		}
		unread = notDone;
	}
	return { memories, events, failure };
}

/** A kind's first poll: it starts now, by the service's clock (one one-record request). */
export async function startKind(
	client: ServiceClient,
	kind: RecordKind,
	clock: PollClock,
): Promise<KindMemory> {
	const started = Date.now();
	const page = await firstPage(client, kind, {}, 1, clock.deadline);
	clock.measured(Date.now() - started, page?.answeredAt);
	const { now, uncertainty } = clock.serviceNow();
	return KindMemory.startingAt(now, uncertainty, kind);
}

/**
 * Reads one kind's windows while its share of the poll lasts. Returns whether the kind is done
 * for this poll (read up to the service's time, or waiting for time to pass).
 */
async function readKind(
	client: ServiceClient,
	kind: RecordKind,
	memory: KindMemory,
	clock: PollClock,
	events: PolledEvent[],
	firstRound: boolean,
): Promise<boolean> {
	let followed = false;
	for (let windows = 0; windows < MAX_WINDOWS_PER_POLL; windows++) {
		// A kind's first window of a poll is read even without time left, so every poll moves on.
		if ((windows > 0 || !firstRound) && clock.roundsLeft() < 1) return false;
		// Memory full: the cursor waits, and a follow window read in part gives way to a settle window.
		if (memory.window?.purpose === 'follow' && memory.countSeen() >= MAX_SEEN_STATES) {
			if (settleDue(memory, clock)) memory.window = undefined;
		}
		const window = memory.window ?? nextWindow(memory, clock, followed);
		if (!window) return true;
		memory.window = window;
		const read = await readWindow(
			client,
			kind,
			window,
			clock,
			(records, serviceTime) => {
				for (const polled of records) events.push(...memory.accept(polled, window, serviceTime));
			},
			(open) => window.purpose !== 'follow' || keepFollowing(memory, open, clock),
		);
		if (!read.complete && memory.window === undefined) continue;
		if (!read.complete) return false;
		if (window.purpose !== 'issued-baseline') memory.uncounted = window.total === null;
		memory.window = undefined;
		memory.completed(window, read.snapshot);
		memory.forgetExpired(window.openedAt);
		if (window.purpose === 'follow') followed = true;
	}
	return false;
}

/**
 * The next window of a kind, or none when it is read up to the service's time:
 * 1. the baseline's reads: the states listed within the listing bound before the start, and the
 *    invoices issued within ISSUED_WITHIN_MS before it (never reported as issued);
 * 2. a settle window, from the settled position up to what can no longer be listed late, when
 *    that catches up with the cursor, spans the listing bound, or memory runs full;
 * 3. once a poll, a follow window from the cursor to whatever is listed now; from the settled
 *    position instead while the states between the two fill less than half a page, so that
 *    an idle poll is one request that moves both positions.
 */
function nextWindow(
	memory: KindMemory,
	clock: PollClock,
	followed: boolean,
): OpenWindow | undefined {
	const { now, uncertainty } = clock.serviceNow();
	const open = (purpose: WindowPurpose, from: number, to?: number): OpenWindow => ({
		purpose,
		from,
		...(to === undefined ? {} : { to }),
		openedAt: now,
		readAt: now,
		uncertainty,
		nextPage: FIRST_PAGE,
		total: null,
	});
	if (memory.baseline[0] === 'recent') return open('baseline', memory.settled, memory.start);
	if (memory.baseline[0] === 'issued') {
		const issuedFrom = Math.floor((memory.start - ISSUED_WITHIN_MS) / DAY_MS - 1) * DAY_MS;
		return open('issued-baseline', issuedFrom, memory.start);
	}
	// Without totalItems a record that leaves a window while it is read cannot be noticed, one
	// that moves within it can (it comes again): a settle window then reads on to the list's end.
	if (settleDue(memory, clock)) {
		return open('settle', memory.settled, memory.uncounted ? undefined : settleable(clock));
	}
	if (followed || memory.countSeen() >= MAX_SEEN_STATES) return undefined;
	const fewBetween = memory.countSeen((stamp) => stamp < memory.cursor) < MAX_PAGE_SIZE / 2;
	return open('follow', fewBetween ? memory.settled : memory.cursor);
}

/**
 * Whether a follow window reads on: not while memory is full, nor, when it starts at the settled
 * position and its first page showed it is no snapshot, when a settle window is due that reaches
 * the cursor and so reads that span once for both positions (an aged backlog, seen by the
 * service's clock only now). The window is then dropped for that settle window.
 */
function keepFollowing(memory: KindMemory, window: OpenWindow, clock: PollClock): boolean {
	if (memory.countSeen() >= MAX_SEEN_STATES) return false;
	if (window.nextPage !== FIRST_PAGE + 1 || window.from > memory.settled) return true;
	if (!settleDue(memory, clock) || settleable(clock) < memory.cursor) return true;
	memory.window = undefined;
	return false;
}

function settleable(clock: PollClock): number {
	const { now, uncertainty } = clock.serviceNow();
	return floorSecond(now - LISTED_WITHIN_MS - uncertainty) - SECOND_MS;
}

function settleDue(memory: KindMemory, clock: PollClock): boolean {
	const end = settleable(clock);
	return (
		end > memory.settled &&
		(end >= memory.cursor ||
			end - memory.settled >= LISTED_WITHIN_MS ||
			memory.countSeen() >= MAX_SEEN_STATES / 2)
	);
}

function readWantedEvents(context: IPollFunctions): Set<string> {
	const chosen = selectedEventTypes(context.getNodeParameter('events', []));
	const pollable: readonly string[] = POLLABLE_EVENT_TYPES;
	const wanted = new Set(
		chosen === null ? pollable : (chosen ?? []).filter((type) => pollable.includes(type)),
	);
	if (wanted.size === 0) {
		throw new NodeOperationError(context.getNode(), 'No event is selected', {
			description: `In Events, ${CHOOSE_EVENT_TYPES}. The Polling Trigger can see: ${pollable.join(', ')}.`,
		});
	}
	return wanted;
}

/**
 * Fetch Test Event: a recent record that matches a selected event, as the trigger would report
 * it; the position is left untouched. Per record kind it asks for one page of the records
 * changed in the last 5 minutes, day, 30 days (by the service's clock, from the first answer),
 * then of any, and stops at the first page with a match: at most 4 requests per kind.
 */
async function fetchTestEvent(
	context: IPollFunctions,
	client: ServiceClient,
	kinds: RecordKind[],
	wanted: Set<string>,
): Promise<INodeExecutionData[][]> {
	const clock = new PollClock(Date.now() + MAX_POLL_MS);
	await startKind(client, kinds[0], clock);
	const { now } = clock.serviceNow();
	const anyEvent = { reportIssue: () => true, reportFinal: () => true };
	const found: Array<{ event: PolledEvent; at: number }> = [];
	for (const kind of kinds) {
		for (const lookBack of [...TEST_EVENT_LOOKBACK_MS, undefined]) {
			const since = lookBack === undefined ? {} : { updatedFrom: timestampOf(now - lookBack) };
			const records = (await firstPage(client, kind, since, MAX_PAGE_SIZE))?.records ?? [];
			const matches = records.flatMap((record) => {
				const polled = { kind, record } as PolledRecord;
				const id = recordId(polled) ?? '';
				const events = id ? eventsOf(polled, id, digestOf(record), anyEvent) : [];
				const event = events.filter(({ eventType }) => wanted.has(eventType)).pop();
				return event ? [{ event, at: readServiceTime(record.updatedAt) ?? -Infinity }] : [];
			});
			found.push(...matches);
			if (matches.length > 0) break;
		}
	}
	const newest = found.sort((a, b) => b.at - a.at)[0];
	if (newest) return [context.helpers.returnJsonArray([newest.event as unknown as IDataObject])];
	throw new NodeOperationError(context.getNode(), 'No record matches the selected events yet', {
		description:
			'The service has no invoice or managed asset for the events chosen in Events. Choose more events, or issue an invoice first, then fetch a test event again.',
	});
}
