import { CHANGE_LISTED_WITHIN_MS, MAX_PAGE_SIZE } from '../../transport/contract';
import { PAGE_CONCURRENCY } from '../../transport/pageReader';
import {
	DAY_MS,
	floorSecond,
	ISSUED_WITHIN_MS,
	RecordStates,
	SECOND_MS,
	type RecordKind,
	type StoredStates,
} from './changes';
import { lastSettleSecond, settledBy, type PollClock } from './clock';
import { openWindow, type ListWindow } from './window';

/** At most this many record states are kept per record kind (about 30 bytes each). */
export const MAX_STATES = 20_000;
const ROUND = PAGE_CONCURRENCY * MAX_PAGE_SIZE;

type BaselineRead = 'recent' | 'issued';

/** What the trigger keeps per record kind in the workflow's static data. */
export interface StoredKind extends Partial<StoredStates> {
	/** The service's time the trigger started at, the follow position and the settled position. */
	start: number;
	cursor: number;
	settled: number;
	/** Baseline reads still to finish, in order; nothing is reported before. */
	baseline?: BaselineRead[];
	follow?: ListWindow;
	settle?: ListWindow;
	/** The service's time less n8n's when last read: the next poll plans its first window by it. */
	clockOffset?: number;
}

/** A record kind: positions, windows and states, and its next reads' plan (docs/choosing-a-trigger.md). */
export class KindMemory {
	readonly start: number;
	cursor: number;
	settled: number;
	baseline: BaselineRead[];
	follow: ListWindow | undefined;
	settle: ListWindow | undefined;
	clockOffset: number | undefined;
	readonly states: RecordStates;

	constructor(stored: StoredKind) {
		this.start = stored.start;
		this.cursor = stored.cursor;
		this.settled = stored.settled;
		this.baseline = [...(stored.baseline ?? [])];
		// Copies: reading a window must not change static data n8n may not save.
		this.follow = stored.follow && { ...stored.follow };
		this.settle = stored.settle && { ...stored.settle };
		this.clockOffset = stored.clockOffset;
		this.states = new RecordStates(stored.start, stored);
	}

	static startingAt(clock: Pick<PollClock, 'serviceNow'>, kind: RecordKind): KindMemory {
		const { now, uncertainty } = clock.serviceNow();
		// Without the service's clock, the start it may be at the earliest: nothing after it is lost.
		const start = floorSecond(now - uncertainty);
		const settled = settledBy(now, uncertainty);
		const baseline: BaselineRead[] = kind === 'invoice' ? ['recent', 'issued'] : ['recent'];
		return new KindMemory({ start, cursor: start, settled, baseline });
	}

	/** Whether a round of the follow read fits the state bound, with what the settle read may still add. */
	followFits(): boolean {
		const { settle, states } = this;
		const toCome =
			settle?.purpose === 'settle' && settle.total !== null
				? Math.max(0, settle.total - states.count(settle.from, settle.to))
				: 0;
		return states.count() + toCome + ROUND <= MAX_STATES;
	}

	// From the cursor, the settle window's end (they split the list), or the settled position while few
	// states lie between: an idle poll is one request.
	openFollow(clock: PollClock): ListWindow | undefined {
		if (this.follow || this.baseline.length > 0) return this.follow;
		const fewUnsettled = this.states.count(this.settled, this.cursor - 1) < MAX_PAGE_SIZE / 2;
		const withoutSettle = fewUnsettled ? this.settled : this.cursor;
		const from = this.settle ? Math.max(this.cursor, this.settle.to ?? this.cursor) : withoutSettle;
		this.follow = openWindow('follow', clock, from);
		return this.follow;
	}

	/** The exact window: the baseline's next read, else the settle window due now, which closes the follow window it overlaps. */
	openSettle(clock: PollClock): ListWindow | undefined {
		if (this.settle) return this.settle;
		const [read] = this.baseline;
		if (read === 'recent') {
			this.settle = openWindow('recent', clock, this.settled, this.start);
		} else if (read === 'issued') {
			const issuedFrom = Math.floor((this.start - ISSUED_WITHIN_MS) / DAY_MS - 1) * DAY_MS;
			this.settle = openWindow('issued', clock, issuedFrom);
		} else {
			const end = this.settleDue(clock);
			if (end === undefined) return undefined;
			if (this.follow && this.follow.from < end) this.follow = undefined;
			this.settle = openWindow('settle', clock, this.settled, end);
		}
		return this.settle;
	}

	/** The end of the settle window due now: one reaching the cursor, spanning the listing bound, or freeing states. */
	settleDue(clock: PollClock): number | undefined {
		const { now, uncertainty } = clock.serviceNow();
		const end = lastSettleSecond(now, uncertainty);
		const due =
			end >= this.cursor ||
			end - this.settled >= CHANGE_LISTED_WITHIN_MS ||
			this.states.count() + ROUND > MAX_STATES;
		return end > this.settled && due ? end : undefined;
	}

	/** A settle window's end once its first page answered: by the service's time then, halved while it would not fit the state bound. */
	narrowedSettleEnd(window: ListWindow): number | undefined {
		const { purpose, from, to, openedAt, uncertainty, total } = window;
		if (purpose !== 'settle' || to === undefined) return undefined;
		const { states } = this;
		const fits = states.count() + (total ?? 0) - states.count(from, to) <= MAX_STATES;
		const end = fits || to - from < 2 * SECOND_MS ? to : floorSecond((from + to) / 2);
		return Math.min(end, lastSettleSecond(openedAt, uncertainty));
	}

	// A window read to its end moves the positions; a settle window's last second is read again
	// (a stamp's fractions lie after updatedTo), unless it holds a page or more.
	completed(window: ListWindow, snapshot = false) {
		const { purpose, from, to, openedAt, readAt, uncertainty } = window;
		if (window === this.follow) this.follow = undefined;
		if (window === this.settle) this.settle = undefined;
		if (purpose === 'recent' || purpose === 'issued') this.baseline.shift();
		if (purpose === 'follow') {
			this.cursor = Math.max(this.cursor, floorSecond(readAt - uncertainty));
			if (snapshot && from <= this.settled) {
				this.settled = Math.max(this.settled, settledBy(openedAt, uncertainty));
			}
		}
		if (purpose === 'settle' && to !== undefined && to >= from) {
			const full = this.states.count(to, to + SECOND_MS - 1) >= MAX_PAGE_SIZE;
			this.settled = Math.max(this.settled, full ? to + SECOND_MS : to);
		}
		this.cursor = Math.max(this.cursor, this.settled);
		this.states.forget(this.settled, readAt);
	}

	toJSON(): StoredKind {
		const { start, cursor, settled, baseline, follow, settle, clockOffset } = this;
		const windows = { ...(follow && { follow }), ...(settle && { settle }) };
		const offset = clockOffset === undefined ? {} : { clockOffset };
		return { start, cursor, settled, ...this.states.toJSON(), baseline, ...windows, ...offset };
	}
}

/** The stored state of a kind; undefined for none, or one of an older form (a new baseline). */
export function readStoredKind(value: unknown): StoredKind | undefined {
	const stored = (typeof value === 'object' && value !== null ? value : {}) as Partial<StoredKind>;
	if (![stored.start, stored.cursor, stored.settled].every(Number.isFinite)) return undefined;
	if (Object.values(stored.seen ?? {}).some((keys) => !Array.isArray(keys))) return undefined;
	return stored as StoredKind;
}
