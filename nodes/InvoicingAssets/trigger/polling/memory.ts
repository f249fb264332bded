import {
	CHANGE_LISTED_WITHIN_MS,
	MAX_PAGE_SIZE,
	toServiceTimestamp,
	type Invoice,
} from '../../transport/contract';
import { readServiceTime } from '../../transport/responses';
import {
	DAY_MS,
	digestOf,
	eventsOf,
	floorSecond,
	latestIssueMoment,
	recordId,
	SECOND_MS,
	type PolledEvent,
	type PolledRecord,
	type ReportedBefore,
} from './changes';

/** A change is listed within this long of its `updatedAt` (the contract's assumption). */
export const LISTED_WITHIN_MS = CHANGE_LISTED_WITHIN_MS;

/** An invoice is reported as issued when first seen at most this long after its issueDate. */
export const ISSUED_WITHIN_MS = 3 * DAY_MS;

/** A final state reported (paid, cancelled, retired) is remembered this long: not reported again. */
export const FINAL_REMEMBERED_MS = 30 * DAY_MS;

/** A state of a record whose stamp the trigger cannot place is remembered this long after it was last listed. */
export const UNPLACED_REMEMBERED_MS = DAY_MS;

/**
 * At most this many record states are remembered per kind between the settled position and the
 * cursor (about 30 bytes each); beyond it the cursor waits until the settled position moves on.
 */
export const MAX_SEEN_STATES = 20_000;

/** Why a window is read, which decides what it may report and which position it moves. */
export type WindowPurpose = 'baseline' | 'issued-baseline' | 'settle' | 'follow';

/** A window of the list read across polls, page by page: the query stays the same until it ends. */
export interface OpenWindow {
	purpose: WindowPurpose;
	/** updatedFrom (epoch ms, a whole second); for the issued baseline, issuedFrom. */
	from: number;
	/** updatedTo (epoch ms, a whole second, inclusive), or issuedTo; undefined: whatever is listed now. */
	to?: number;
	/** The service's time of the window's first page (epoch ms). */
	openedAt: number;
	/** The service's time of the window's latest page (epoch ms). */
	readAt: number;
	/** How far `openedAt` may be off: 0 from the service's Date header, else the listing bound. */
	uncertainty: number;
	nextPage: number;
	/** The total the last page reported; null when the service does not count. */
	total: number | null;
}

/** What the trigger keeps per record kind in the workflow's static data. */
export interface StoredKind {
	/** Service time (epoch ms) the trigger started at. */
	start: number;
	/** Read position: every change listed when it was read, stamped before it, was read. */
	cursor: number;
	/** Settled position: every change stamped before it was read after it could no longer be listed late. */
	settled: number;
	/** The states read at or after `settled`: updatedAt as given → record ID → digest. */
	seen: Record<string, Record<string, string>>;
	/** States of records whose stamp cannot be placed (`ID digest updatedAt`), by the day they may be forgotten. */
	unplaced: Record<string, string[]>;
	/** Invoices reported (or listed before the start) as issued, by the day they may be forgotten. */
	issued: Record<string, string[]>;
	/** Final states reported (`paid INV-1`), by the day they may be forgotten. */
	final: Record<string, string[]>;
	/** Baseline reads still to finish, in order; nothing is reported before. */
	baseline: Array<'recent' | 'issued'>;
	window?: OpenWindow;
	/** The service's time less n8n's (ms) when last read: the next poll plans its first window by it. */
	clockOffset?: number;
	/** The list reports no totalItems: a settle window then reads on to the end of the list. */
	uncounted?: boolean;
}

/** Keys that expire, stored by the day (epoch days) they may be forgotten: compact and exact. */
class ExpiringSet {
	private readonly expiry = new Map<string, number>();

	constructor(stored: Record<string, string[]> = {}) {
		for (const [day, keys] of Object.entries(stored)) {
			for (const key of keys) this.expiry.set(key, Number(day));
		}
	}

	has(key: string): boolean {
		return this.expiry.has(key);
	}

	add(key: string, until: number) {
		this.expiry.set(key, Math.max(this.expiry.get(key) ?? 0, Math.ceil(until / DAY_MS)));
	}

	forgetBefore(now: number): void {
		const today = Math.floor(now / DAY_MS);
		for (const [key, day] of this.expiry) if (day < today) this.expiry.delete(key);
	}

	toJSON(): Record<string, string[]> {
		const byDay: Record<string, string[]> = {};
		for (const [key, day] of this.expiry) (byDay[day] ??= []).push(key);
		return byDay;
	}
}

/**
 * What the trigger knows of one record kind while a poll runs: the positions, the states read
 * since the settled position, and what it reported of issues and final states. Every state read
 * goes through `accept`, which reports it when it is new; the positions move only when a window
 * was read completely (`completed`).
 */
export class KindMemory implements ReportedBefore {
	readonly start: number;

	cursor: number;

	settled: number;

	baseline: Array<'recent' | 'issued'>;

	window: OpenWindow | undefined;

	clockOffset: number | undefined;

	uncounted: boolean;

	/** Record ID → the state read of it at or after `settled`. */
	private readonly seen = new Map<string, { updatedAt: string; stamp: number; digest: string }>();

	private readonly unplaced: ExpiringSet;

	private readonly issued: ExpiringSet;

	private readonly final: ExpiringSet;

	/** The service's time of the page being read (epoch ms): what issues and final states are timed by. */
	serviceTime = 0;

	constructor(stored: StoredKind) {
		this.start = stored.start;
		this.cursor = stored.cursor;
		this.settled = stored.settled;
		this.baseline = [...stored.baseline];
		// A copy: a read that moves the window on must not change the static data n8n may not save.
		this.window = stored.window && { ...stored.window };
		this.uncounted = stored.uncounted === true;
		this.clockOffset = stored.clockOffset;
		for (const [updatedAt, states] of Object.entries(stored.seen)) {
			const stamp = readServiceTime(updatedAt);
			if (stamp === undefined) continue;
			for (const [id, digest] of Object.entries(states)) {
				this.seen.set(id, { updatedAt, stamp, digest });
			}
		}
		this.unplaced = new ExpiringSet(stored.unplaced);
		this.issued = new ExpiringSet(stored.issued);
		this.final = new ExpiringSet(stored.final);
	}

	/** A kind that starts now: the baseline reads come first. */
	static startingAt(now: number, uncertainty: number, kind: 'invoice' | 'asset'): KindMemory {
		const start = floorSecond(now);
		const settled = floorSecond(now - LISTED_WITHIN_MS - uncertainty);
		const baseline = kind === 'invoice' ? ['recent', 'issued'] : ['recent'];
		return new KindMemory(
			readStoredKind({ start, cursor: start, settled, baseline }) as StoredKind,
		);
	}

	/** How many states were read since the settled position (with a stamp that passes `test`). */
	countSeen(test?: (stamp: number) => boolean): number {
		if (!test) return this.seen.size;
		let count = 0;
		for (const { stamp } of this.seen.values()) if (test(stamp)) count += 1;
		return count;
	}

	/**
	 * A record state read by a window (at the service's time `now`): its events when it is a state
	 * not read before, and not older than the one read of the record; nothing for the baseline's
	 * reads, which only remember.
	 */
	accept(polled: PolledRecord, window: OpenWindow, now: number): PolledEvent[] {
		this.serviceTime = now;
		const id = recordId(polled);
		if (id === undefined) return [];
		if (window.purpose === 'issued-baseline') {
			if (polled.kind === 'invoice') this.reportIssue(id, polled.record);
			return [];
		}
		const updatedAt = String(polled.record.updatedAt);
		const digest = digestOf(polled.record).slice(0, 12);
		const stamp = readServiceTime(polled.record.updatedAt);
		const placed = stamp !== undefined && stamp <= now + window.uncertainty + LISTED_WITHIN_MS;
		if (placed) {
			// Outside the window: a service that ignores the filter; the record's turn comes.
			if (stamp < window.from || stamp >= (window.to ?? stamp) + SECOND_MS) return [];
			const known = this.seen.get(id);
			if (known && (known.stamp > stamp || (known.stamp === stamp && known.digest === digest))) {
				return [];
			}
			this.seen.set(id, { updatedAt, stamp, digest });
		} else {
			const key = `${id} ${digest} ${updatedAt}`;
			const known = this.unplaced.has(key);
			this.unplaced.add(key, now + UNPLACED_REMEMBERED_MS);
			if (known) return [];
		}
		const events = eventsOf(polled, id, digest, this);
		return window.purpose === 'baseline' ? [] : events;
	}

	reportIssue(invoiceNumber: string, invoice: Invoice): boolean {
		if (this.issued.has(invoiceNumber)) return false;
		const issuedBy = latestIssueMoment(invoice);
		if (issuedBy !== undefined && issuedBy + ISSUED_WITHIN_MS < this.serviceTime) return false;
		// An issueDate that cannot be read: reported once, and remembered as long as final states.
		this.issued.add(
			invoiceNumber,
			issuedBy === undefined ? this.serviceTime + FINAL_REMEMBERED_MS : issuedBy + ISSUED_WITHIN_MS,
		);
		return true;
	}

	reportFinal(status: string, id: string): boolean {
		const key = `${status} ${id}`;
		if (this.final.has(key)) return false;
		this.final.add(key, this.serviceTime + FINAL_REMEMBERED_MS);
		return true;
	}

	/**
	 * A window read completely: the cursor moves to its end (to the second the service was in
	 * when it was read, which may still gain changes), and the settled position up to what can no
	 * longer be listed late, when the window started at or before it and was read as one snapshot
	 * (one page) or exactly (a settle window). What lies before the settled position is forgotten.
	 */
	completed(window: OpenWindow, snapshot: boolean) {
		const { from, to, openedAt, readAt, uncertainty } = window;
		// The window's last second is read again by the next window (a stamp with fractions of
		// that second lies after its updatedTo), unless it holds a page of changes or more.
		const lastAgain =
			to === undefined || this.countSeen((stamp) => floorSecond(stamp) === to) < MAX_PAGE_SIZE;
		// A follow read is not exact (what it misses, a settle read finds): its cursor goes on to the
		// second of its last page, so a burst it read over many pages is not read again from its first.
		const readTo = Math.min(
			to === undefined ? Number.POSITIVE_INFINITY : lastAgain ? to : to + SECOND_MS,
			floorSecond((window.purpose === 'follow' ? readAt : openedAt) - uncertainty),
		);
		if (window.purpose === 'issued-baseline' || window.purpose === 'baseline') {
			this.baseline.shift();
			return;
		}
		if (from <= this.cursor) this.cursor = Math.max(this.cursor, readTo);
		const exact = snapshot || window.purpose === 'settle';
		if (exact && from <= this.settled) {
			const settleTo = Math.min(readTo, floorSecond(openedAt - LISTED_WITHIN_MS - uncertainty));
			this.settled = Math.max(this.settled, settleTo);
			this.cursor = Math.max(this.cursor, this.settled);
		}
		for (const [id, { stamp }] of this.seen) if (stamp < this.settled) this.seen.delete(id);
	}

	/** Forgets what can no longer be needed at the service's time `now`. */
	forgetExpired(now: number) {
		for (const memory of [this.issued, this.final, this.unplaced]) memory.forgetBefore(now);
	}

	toJSON(): StoredKind {
		const seen: StoredKind['seen'] = {};
		for (const [id, { updatedAt, digest }] of this.seen) (seen[updatedAt] ??= {})[id] = digest;
		return {
			start: this.start,
			cursor: this.cursor,
			settled: this.settled,
			seen,
			unplaced: this.unplaced.toJSON(),
			issued: this.issued.toJSON(),
			final: this.final.toJSON(),
			baseline: this.baseline,
			...(this.window ? { window: this.window } : {}),
			...(this.clockOffset === undefined ? {} : { clockOffset: this.clockOffset }),
			...(this.uncounted ? { uncounted: true } : {}),
		};
	}
}

/** The stored state of a kind, or undefined when there is none (or one of an older form). */
export function readStoredKind(value: unknown): StoredKind | undefined {
	const stored = (typeof value === 'object' && value !== null ? value : {}) as Partial<StoredKind>;
	if (![stored.start, stored.cursor, stored.settled].every(Number.isFinite)) return undefined;
	return { seen: {}, unplaced: {}, issued: {}, final: {}, baseline: [], ...stored } as StoredKind;
}

export function timestampOf(ms: number): string {
	return toServiceTimestamp(new Date(ms));
}
