import type { IDataObject, INodeExecutionData, IPollFunctions } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { ServiceClient } from '../../transport';
import { MAX_PAGE_SIZE } from '../../transport/contract';
import { PAGE_CONCURRENCY } from '../../transport/pageReader';
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
	MAX_STATES,
	readStoredKind,
	timestampOf,
	type OpenWindow,
} from './memory';
import {
	openWindow,
	PollClock,
	readExactly,
	readOn,
	seamOf,
	type Page,
	type PollSeam,
} from './reader';

/** Where the trigger keeps its state in the node's static data. */
const STATE_KEY = 'pollState';

/** A poll takes n8n's budget (2.38+; 5 minutes on the legacy scheduler), at most this: its changes reach the workflow when it returns. */
export const MAX_POLL_MS = 30_000;

/** A poll running this long past its budget may have been given up by n8n (which allows 9 s): it stores nothing. */
export const ABANDONED_AFTER_MS = 5_000;

/** Fetch Test Event looks this far back, then at any record: a page holds a window's newest only when whole. */
const TEST_EVENT_LOOKBACK_MS = [5 * 60_000, DAY_MS, 30 * DAY_MS];

/** Polls of a trigger running in this n8n process, by workflow and node: who runs it, until when. */
const runningPolls = new Map<string, { poll: object; until: number }>();

/**
 * The last poll of a trigger in this process that reported changes: the state it read, and when.
 * n8n's durable scheduler saves such a poll's static data after it returned: a poll that reads
 * that same state again waits, reporting nothing, for at most COMMIT_WAIT_MS.
 */
const reportingPolls = new Map<string, { from: unknown; at: number }>();
export const COMMIT_WAIT_MS = 60_000;

/** The poll of n8n's Polling Trigger: the events chosen, Fetch Test Event in the editor. */
export async function pollChanges(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
	const wanted = readWantedEvents(this);
	const kinds = [...new Set([...wanted].map(kindOf))];
	const seam = seamOf(new ServiceClient(this));
	if (this.getMode() === 'manual') return await fetchTestEvent(this, seam, kinds, wanted);
	// n8n's poll budget (2.38 and later; no such method before).
	const budgetMs = (this as Partial<IPollFunctions>).getPollBudgetMs?.() || MAX_POLL_MS;
	const reported = await runPoll(seam, this.getWorkflowStaticData('node'), {
		key: `${this.getWorkflow().id ?? ''}:${this.getNode().id}`,
		kinds,
		wanted,
		budgetMs,
		warn: (message) => this.logger.warn(message),
	});
	return reported ? [this.helpers.returnJsonArray(reported as unknown as IDataObject[])] : null;
}

export interface PollOptions {
	/** The trigger in this n8n process: its workflow and node. */
	key: string;
	kinds: RecordKind[];
	wanted: Set<string>;
	budgetMs: number;
	warn(message: string): void;
}

/**
 * One poll: reports each change once, within n8n's poll budget. Per record kind the trigger keeps
 * two positions (memory.ts): a cursor that follows new changes as soon as they are listed, and a
 * settled position behind it, up to which every change was read after it could no longer be
 * listed late. Each poll reads windows of the list (reader.ts) from them: a record state not read
 * before is reported as soon as it is read; a window too large for one poll goes on in the next.
 * Returns the events to report (null for none) and stores the state in `staticData`.
 */
export async function runPoll(
	seam: PollSeam,
	staticData: IDataObject,
	{ key, kinds, wanted, budgetMs, warn }: PollOptions,
): Promise<PolledEvent[] | null> {
	const deadline = seam.now() + Math.min(budgetMs, MAX_POLL_MS);
	const running = runningPolls.get(key);
	// Polls that overlap (n8n's legacy scheduler): the one running goes on alone.
	if (running && running.until > seam.now()) return null;
	const poll = { poll: {}, until: deadline + ABANDONED_AFTER_MS };
	runningPolls.set(key, poll);
	try {
		const from = staticData.pollStateId;
		const reporting = reportingPolls.get(key);
		const waiting = from !== undefined && reporting?.from === from;
		if (waiting && seam.now() - (reporting?.at ?? 0) < COMMIT_WAIT_MS) return null;
		const stored = (staticData[STATE_KEY] ?? {}) as IDataObject;
		const { memories, events, failure, pagesRead } = await readChanges(
			seam,
			kinds,
			stored,
			deadline,
		);
		// A poll n8n may have given up: what it read is left to the next poll, which reads it again.
		if (runningPolls.get(key) !== poll || seam.now() > poll.until) return null;
		// A poll with nothing to report fails when it read nothing or when only the user can cure
		// what failed; one stopped by what passes (a rate limit, the service down) keeps the pages
		// it read, since n8n's durable scheduler keeps nothing of a poll that throws.
		if (failure !== undefined && events.length === 0 && (pagesRead === 0 || !passes(failure))) {
			throw failure;
		}
		if (failure !== undefined) {
			warn(
				`Invoicing & Assets Polling Trigger: a poll stopped early (${(failure as Error).message}); the pages read so far are kept, the next poll goes on from there`,
			);
		}
		// A kind a failure kept this poll from reading stays as it was; kinds no longer chosen are
		// forgotten (chosen again, they start with a baseline of their own).
		staticData[STATE_KEY] = Object.fromEntries(
			kinds.map((kind) => [kind, memories.get(kind)?.toJSON() ?? stored[kind]]),
		) as IDataObject;
		staticData.pollStateId = `${seam.now()}.${Math.random()}`;
		const reported = events.filter((event) => wanted.has(event.eventType)).sort(byOccurrence);
		if (reported.length === 0) return null;
		reportingPolls.set(key, { from, at: seam.now() });
		return reported;
	} finally {
		if (runningPolls.get(key) === poll) runningPolls.delete(key);
	}
}

/**
 * Reads each kind's windows until the deadline. Each kind may take its share of the time left,
 * the kind furthest behind first; what a kind leaves unused goes, in a second round, to the kinds
 * not done. A failure ends the poll: the pages read before it are kept, and whether any was.
 */
async function readChanges(
	seam: PollSeam,
	kinds: RecordKind[],
	stored: IDataObject,
	deadline: number,
) {
	const memories = new Map<RecordKind, KindMemory>();
	const events: PolledEvent[] = [];
	let failure: unknown;
	let pagesRead = 0;
	const storedKind = (kind: RecordKind) => readStoredKind(stored[kind]);
	// The service's clock as the last poll knew it, so that the first window is planned by it.
	const offset = kinds.map((kind) => storedKind(kind)?.clockOffset).find(Number.isFinite);
	const clock = new PollClock(() => seam.now(), deadline, offset);
	let unread = [...kinds].sort(
		(a, b) => (storedKind(a)?.settled ?? -Infinity) - (storedKind(b)?.settled ?? -Infinity),
	);
	for (let round = 0; round < 2 && unread.length > 0 && failure === undefined; round++) {
		const notDone: RecordKind[] = [];
		for (const [index, kind] of unread.entries()) {
			clock.deadline = seam.now() + (deadline - seam.now()) / (unread.length - index);
			try {
				const known = storedKind(kind);
				const memory =
					memories.get(kind) ??
					(known ? new KindMemory(known) : await startKind(seam, kind, clock));
				memories.set(kind, memory);
				const take = (window: OpenWindow) => (page: Page) => {
					pagesRead += 1;
					for (const record of page.records) {
						events.push(...memory.accept({ kind, record } as PolledRecord, window, window.readAt));
					}
				};
				const done = await readKind(seam, kind, memory, clock, take, round === 0);
				memory.clockOffset = clock.offset;
				if (!done) notDone.push(kind);
			} catch (error) {
				failure = error;
				break;
			}
		}
		unread = notDone;
	}
	return { memories, events, failure, pagesRead };
}

/**
 * A kind's first poll: it starts now, by the service's clock, from this poll's answers (so that
 * kinds that start together start at once) or else from a one-record request.
 */
export async function startKind(
	seam: PollSeam,
	kind: RecordKind,
	clock: PollClock,
): Promise<KindMemory> {
	if (clock.roundMs === undefined) {
		const started = clock.now();
		const request = { kind, query: {}, page: 1, pageSize: 1, deadline: clock.deadline };
		const page = await seam.readPage(request);
		clock.measured(clock.now() - started, page.answeredAt);
	}
	const { now, uncertainty } = clock.serviceNow();
	return KindMemory.startingAt(now, uncertainty, kind);
}

/**
 * Reads one kind while its share of the poll lasts, in steps: each step reads a round of the
 * follow window (new changes at the cursor) and a step of the settle window, so that neither
 * waits for the other. One follow window is read to its end per poll; settle windows are read
 * while one is due. Returns whether the kind is done for this poll.
 */
async function readKind(
	seam: PollSeam,
	kind: RecordKind,
	memory: KindMemory,
	clock: PollClock,
	take: (window: OpenWindow) => (page: Page) => void,
	firstRound: boolean,
): Promise<boolean> {
	let followed = false;
	for (let step = 0; ; step++) {
		// A kind's first step of a poll is read even without time left, so that every poll moves
		// both windows on.
		if ((step > 0 || !firstRound) && clock.roundsLeft() < 1) return false;
		const room = memory.countStates() + settleToCome(memory) + ROUND <= MAX_STATES;
		const follow: OpenWindow | undefined =
			followed || !room ? undefined : (memory.follow ??= nextFollow(memory, clock));
		if (follow) {
			// Its first page may show by the service's clock that a settle window is due over it.
			const goOn = () => memory.settle !== undefined || settleEnd(memory, clock) <= follow.from;
			const end = await readOn(seam, kind, follow, clock, take(follow), goOn);
			if (end) {
				memory.follow = undefined;
				memory.completed(follow, end === 'snapshot');
				followed = true;
			}
		}
		const settle = (memory.settle ??= nextSettle(memory, clock));
		if (!follow && !settle) return true;
		if (settle) {
			const endAllowed = (window: OpenWindow) => settleEndAllowed(memory, window);
			if (await readExactly(seam, kind, settle, clock, take(settle), endAllowed)) {
				memory.settle = undefined;
				memory.completed(settle);
			}
		}
	}
}

/**
 * A settle window's end once its first page answered: no later than what can no longer be
 * listed late by the service's time of that answer (a window planned by a clock that jumped is
 * narrowed), and halved while its states would not fit the bound.
 */
function settleEndAllowed(memory: KindMemory, window: OpenWindow): number | undefined {
	const { purpose, from, to, openedAt, uncertainty, total } = window;
	if (purpose !== 'settle' || to === undefined) return undefined;
	const fits = memory.countStates() + (total ?? 0) - memory.countStates(from, to) <= MAX_STATES;
	const end = fits || to - from < 2 * SECOND_MS ? to : floorSecond((from + to) / 2);
	return Math.min(end, floorSecond(openedAt - LISTED_WITHIN_MS - uncertainty) - SECOND_MS);
}

/** Records of a round of pages. */
const ROUND = PAGE_CONCURRENCY * MAX_PAGE_SIZE;

/** The states the settle window being read may still add (its total less the states known in it). */
function settleToCome(memory: KindMemory): number {
	const { settle } = memory;
	if (settle?.purpose !== 'settle' || settle.total === null) return 0;
	return Math.max(0, settle.total - memory.countStates(settle.from, settle.to));
}

/**
 * The next follow window, once the baseline is read: from the cursor, or from the end of the
 * settle window being read (the two then split the list); or from the settled position while the
 * states between it and the cursor fill less than half a page, so that an idle poll is one
 * request that moves both positions.
 */
function nextFollow(memory: KindMemory, clock: PollClock): OpenWindow | undefined {
	if (memory.baseline.length > 0) return undefined;
	const fewBetween = memory.countStates(memory.settled, memory.cursor - 1) < MAX_PAGE_SIZE / 2;
	const from = memory.settle
		? Math.max(memory.cursor, memory.settle.to ?? memory.cursor)
		: fewBetween
			? memory.settled
			: memory.cursor;
	return openWindow('follow', from, undefined, clock);
}

/**
 * The next exact window: the baseline's (what is listed in the listing bound before the start,
 * then the invoices issued from ISSUED_WITHIN_MS before the start on), then a settle window from
 * the settled position up to what can no longer be listed late, once that reaches the cursor
 * (nothing else reads it), spans the listing bound, or the states kept fill the bound. A follow
 * window that starts before its end gives way to it.
 */
function nextSettle(memory: KindMemory, clock: PollClock): OpenWindow | undefined {
	if (memory.baseline[0] === 'recent')
		return openWindow('recent', memory.settled, memory.start, clock);
	if (memory.baseline[0] === 'issued') {
		const issuedFrom = Math.floor((memory.start - ISSUED_WITHIN_MS) / DAY_MS - 1) * DAY_MS;
		return openWindow('issued', issuedFrom, undefined, clock);
	}
	const end = settleEnd(memory, clock);
	if (memory.baseline.length > 0 || end === Number.NEGATIVE_INFINITY) return undefined;
	if (memory.follow && memory.follow.from < end) memory.follow = undefined;
	return openWindow('settle', memory.settled, end, clock);
}

/** The end of the settle window due now (-Infinity for none). */
function settleEnd(memory: KindMemory, clock: PollClock): number {
	const { now, uncertainty } = clock.serviceNow();
	const end = floorSecond(now - LISTED_WITHIN_MS - uncertainty) - SECOND_MS;
	const due =
		end >= memory.cursor ||
		end - memory.settled >= LISTED_WITHIN_MS ||
		memory.countStates() + ROUND > MAX_STATES;
	return end > memory.settled && due ? end : Number.NEGATIVE_INFINITY;
}

/** A failure a later poll may not meet: a rate limit, the service unavailable, no answer. */
function passes(failure: unknown): boolean {
	if (!(failure instanceof NodeApiError)) return false;
	const status = Number(failure.httpCode);
	return !status || status === 429 || status >= 500;
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
	seam: PollSeam,
	kinds: RecordKind[],
	wanted: Set<string>,
): Promise<INodeExecutionData[][]> {
	const deadline = seam.now() + MAX_POLL_MS;
	const clock = new PollClock(() => seam.now(), deadline);
	await startKind(seam, kinds[0], clock);
	const { now } = clock.serviceNow();
	const anyEvent = { reportIssue: () => true, reportFinal: () => true };
	const found: Array<{ event: PolledEvent; at: number }> = [];
	for (const kind of kinds) {
		for (const lookBack of [...TEST_EVENT_LOOKBACK_MS, undefined]) {
			const query = lookBack === undefined ? {} : { updatedFrom: timestampOf(now - lookBack) };
			const request = { kind, query, page: 1, pageSize: MAX_PAGE_SIZE, deadline };
			const { records } = await seam.readPage(request);
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
