import type { IDataObject } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import { byOccurrence, type PolledEvent, type PolledRecord, type RecordKind } from './changes';
import { PollClock } from './clock';
import { KindMemory, readStoredKind } from './memory';
import { beginPoll, endPoll } from './scheduler';
import {
	readExactly,
	readUpward,
	type KindRead,
	type ListWindow,
	type PolledPage,
	type PollSeam,
} from './window';

const STATE_KEY = 'pollState';

/** A poll takes n8n's budget, at most this: its changes reach the workflow only when it returns. */
export const MAX_POLL_MS = 30_000;

export interface PollOptions {
	/** The trigger in this n8n process: workflow and node. */
	key: string;
	kinds: RecordKind[];
	wanted: Set<string>;
	budgetMs: number;
	warn(message: string): void;
}

/**
 * One scheduled poll: the events to report (or null), its state stored in `staticData`; throws n8n's trigger
 * error (docs/choosing-a-trigger.md#how-the-polling-trigger-loses-nothing-and-repeats-nothing).
 */
export async function runPoll(
	seam: PollSeam,
	staticData: IDataObject,
	{ key, kinds, wanted, budgetMs, warn }: PollOptions,
): Promise<PolledEvent[] | null> {
	const deadline = seam.now() + Math.min(budgetMs, MAX_POLL_MS);
	const turn = beginPoll(key, staticData.pollStateId, seam.now(), deadline);
	if (!turn) return null;
	const stored = (staticData[STATE_KEY] ?? {}) as IDataObject;
	const { memories, events, failure, pagesRead } = await readChanges(seam, kinds, stored, deadline);
	const reported = events.filter((event) => wanted.has(event.eventType)).sort(byOccurrence);
	// Nothing to report and nothing read, or a failure only the user can cure: n8n's trigger
	// error. Otherwise what was read is kept, since n8n keeps nothing of a poll that throws.
	const fails =
		failure !== undefined && events.length === 0 && (pagesRead === 0 || !isTransient(failure));
	if (!endPoll(turn, seam.now(), !fails && reported.length > 0)) return null;
	if (fails) throw failure;
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
	return reported.length > 0 ? reported : null;
}

// Each kind reads while its share of the time left lasts, the one furthest behind first; what a kind
// leaves goes to the kinds not done, in a second round.
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
	const behind = (kind: RecordKind) => storedKind(kind)?.settled ?? -Infinity;
	let unread = [...kinds].sort((a, b) => behind(a) - behind(b));
	for (let round = 0; round < 2 && unread.length > 0 && failure === undefined; round++) {
		const notDone: RecordKind[] = [];
		for (const [index, kind] of unread.entries()) {
			clock.deadline = seam.now() + (deadline - seam.now()) / (unread.length - index);
			try {
				const known = storedKind(kind);
				// A kind's first poll starts it now, by the service's clock.
				if (!known) await clock.learnServiceTime(seam, kind);
				const memory =
					memories.get(kind) ??
					(known ? new KindMemory(known) : KindMemory.startingAt(clock, kind));
				memories.set(kind, memory);
				const accept = (window: ListWindow, { records }: PolledPage) => {
					pagesRead += 1;
					for (const record of records) {
						events.push(...memory.states.accept({ kind, record } as PolledRecord, window));
					}
				};
				const done = await readKind({ seam, kind, clock, accept }, memory);
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

/** Reads a kind in steps, each a round of the follow window and one of the exact window (invariant 2): done or not. */
async function readKind(read: KindRead, memory: KindMemory): Promise<boolean> {
	const { clock } = read;
	const narrowed = (window: ListWindow) => memory.narrowedSettleEnd(window);
	const settleRound = async () => {
		const exact = memory.openSettle(clock);
		if (exact && (await readExactly(exact, read, narrowed))) memory.completed(exact);
		return exact;
	};
	let followed = false;
	for (let step = 0; ; step++) {
		if (!clock.roundFits()) return false;
		// A settle read the last follow read overtook goes first: a poll with time for one round moves it on too.
		const { settle } = memory;
		const settledFirst =
			settle && settle.readAt - settle.uncertainty < memory.cursor && (await settleRound());
		const follow: ListWindow | undefined =
			followed || !memory.followFits() ? undefined : memory.openFollow(clock);
		if (follow) {
			// Its first page may show by the service's clock that a settle window is due over it.
			const keepReading = () =>
				memory.settle !== undefined || (memory.settleDue(clock) ?? -Infinity) <= follow.from;
			const end = await readUpward(follow, read, keepReading);
			if (end) memory.completed(follow, end === 'snapshot');
			followed = end !== undefined;
		}
		const exact = settledFirst || (await settleRound());
		if (!follow && !exact) return true;
	}
}

/** A failure a later poll may not meet: a rate limit, the service unavailable, no answer. */
function isTransient(failure: unknown): boolean {
	if (!(failure instanceof NodeApiError)) return false;
	const status = Number(failure.httpCode);
	return !status || status === 429 || status >= 500;
}
