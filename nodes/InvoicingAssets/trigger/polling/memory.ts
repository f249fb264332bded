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

/** A state whose stamp gives it no place in time is remembered this long after it was last listed. */
export const UNPLACED_REMEMBERED_MS = DAY_MS;

/** At most this many record states are kept per record kind (about 30 bytes each). */
export const MAX_STATES = 20_000;

/**
 * Why a window is read: the baseline's two reads ('recent': what is listed at the start, stamped
 * within the listing bound before it; 'issued': the invoices issued from some days before it
 * on), or the two positions' reads.
 */
export type WindowPurpose = 'recent' | 'issued' | 'follow' | 'settle';

/** A window of the list read across polls: its query stays the same until it ends. */
export interface OpenWindow {
	purpose: WindowPurpose;
	/** updatedFrom (epoch ms, a whole second); for the issued baseline, issuedFrom. */
	from: number;
	/** updatedTo (inclusive); undefined: whatever is listed now. */
	to?: number;
	/** The service's time of the window's first page, and of its latest (epoch ms). */
	openedAt: number;
	readAt: number;
	/** How far `openedAt` may be off: 0 from the service's Date header, else the listing bound. */
	uncertainty: number;
	/** The next page to read: upwards, or downwards once `descending`. */
	nextPage: number;
	/** The total the last page reported; null when the service does not count. */
	total: number | null;
	/** An exact read past its first page: pages are read from the last down to the first. */
	descending?: boolean;
	/** The last pages of a descending read left the total as it was: several may be read at once. */
	steady?: boolean;
	/** The total of a descending read's first page. */
	probed?: number;
}

/** What the trigger keeps per record kind in the workflow's static data. */
export interface StoredKind {
	/** Service time (epoch ms) the trigger started at: changes stamped before it are not reported. */
	start: number;
	/** Follow position: each poll reads the changes listed from it on. */
	cursor: number;
	/** Settled position: every change stamped before it was read after it could no longer be listed late. */
	settled: number;
	/** The record states read, by `updatedAt` as given: `ID digest` each. */
	seen: Record<string, string[]>;
	/** States read while their stamp gave them no place in time, by the day they may be forgotten. */
	unplaced: Record<string, string[]>;
	/** Invoices reported (or listed before the start) as issued, by the day they may be forgotten. */
	issued: Record<string, string[]>;
	/** Final states reported (`paid INV-1`), by the day they may be forgotten. */
	final: Record<string, string[]>;
	/** Baseline reads still to finish, in order; nothing is reported before. */
	baseline: Array<'recent' | 'issued'>;
	follow?: OpenWindow;
	settle?: OpenWindow;
	/** The service's time less n8n's (ms) when last read: the next poll plans its first window by it. */
	clockOffset?: number;
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
 * What the trigger knows of one record kind while a poll runs: the positions, the windows being
 * read, the record states read, and what it reported of issues and final states. A change is a
 * record's state: every state goes through `accept`, which reports it when it was not read
 * before, whatever its stamp says; the positions move only when a window was read to its end.
 */
export class KindMemory implements ReportedBefore {
	readonly start: number;

	cursor: number;

	settled: number;

	baseline: Array<'recent' | 'issued'>;

	follow: OpenWindow | undefined;

	settle: OpenWindow | undefined;

	clockOffset: number | undefined;

	/** `ID digest` → the state's `updatedAt` as given, and the moment it means. */
	private readonly seen = new Map<string, { updatedAt: string; stamp: number | undefined }>();

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
		// Copies: a read that moves a window on must not change the static data n8n may not save.
		this.follow = stored.follow && { ...stored.follow };
		this.settle = stored.settle && { ...stored.settle };
		this.clockOffset = stored.clockOffset;
		for (const [updatedAt, keys] of Object.entries(stored.seen)) {
			const stamp = readServiceTime(updatedAt);
			for (const key of keys) this.seen.set(key, { updatedAt, stamp });
		}
		this.unplaced = new ExpiringSet(stored.unplaced);
		this.issued = new ExpiringSet(stored.issued);
		this.final = new ExpiringSet(stored.final);
	}

	/** A kind that starts now: the baseline reads come first. */
	static startingAt(now: number, uncertainty: number, kind: 'invoice' | 'asset'): KindMemory {
		// Without the service's clock, the start it may be at the earliest: nothing after it is lost.
		const start = floorSecond(now - uncertainty);
		const settled = floorSecond(now - LISTED_WITHIN_MS - uncertainty);
		const baseline = kind === 'invoice' ? ['recent', 'issued'] : ['recent'];
		return new KindMemory(
			readStoredKind({ start, cursor: start, settled, baseline }) as StoredKind,
		);
	}

	/** How many record states are kept (stamped within [from, to] when given). */
	countStates(from = Number.NEGATIVE_INFINITY, to = Number.POSITIVE_INFINITY): number {
		if (from === Number.NEGATIVE_INFINITY && to === Number.POSITIVE_INFINITY) return this.seen.size;
		let count = 0;
		for (const { stamp } of this.seen.values()) {
			if (stamp !== undefined && stamp >= from && stamp <= to) count += 1;
		}
		return count;
	}

	/**
	 * A record state a window read (at the service's time `now`): its events when no state of the
	 * same content was read before; the baseline's reads report nothing.
	 */
	accept(polled: PolledRecord, window: OpenWindow, now: number): PolledEvent[] {
		this.serviceTime = now;
		const id = recordId(polled);
		if (id === undefined) return [];
		const stamp = readServiceTime(polled.record.updatedAt);
		const placed = stamp !== undefined && stamp <= now + window.uncertainty + LISTED_WITHIN_MS;
		if (window.purpose === 'issued') {
			// Only an invoice whose state is older than the listing bound was surely listed before the start.
			const listedBefore = placed && stamp < this.start - LISTED_WITHIN_MS - window.uncertainty;
			if (listedBefore && polled.kind === 'invoice') this.reportIssue(id, polled.record);
			return [];
		}
		// Outside the window: a service that ignores the filter; the record's own window reads it.
		if (placed && (stamp < window.from || stamp >= (window.to ?? stamp) + SECOND_MS)) return [];
		// Listed at the start: its invoice is not reported as issued; a state of the start's second
		// is remembered (the follow read that starts there reports what it has not read).
		if (window.purpose === 'recent' && polled.kind === 'invoice')
			this.reportIssue(id, polled.record);
		if (window.purpose === 'recent' && placed && stamp < this.start) return [];
		const digest = digestOf(polled.record).slice(0, 12);
		const key = `${id} ${digest}`;
		if (!placed) this.unplaced.add(key, now + UNPLACED_REMEMBERED_MS);
		if (this.seen.has(key)) return [];
		this.seen.set(key, { updatedAt: String(polled.record.updatedAt), stamp });
		if (window.purpose === 'recent') return [];
		const events = eventsOf(polled, id, digest, this);
		// Stamped before the start: a change from before it, unless the record was issued or changed
		// after it (its writer's clock is behind).
		if (!placed || stamp >= this.start || this.changedSinceStart(id, polled)) return events;
		return events.filter(({ eventType }) => eventType === 'invoice.issued');
	}

	private changedSinceStart(id: string, { kind, record }: PolledRecord): boolean {
		if (kind === 'invoice' && (latestIssueMoment(record) ?? 0) >= this.start) return true;
		for (const [key, { stamp }] of this.seen) {
			if (key.startsWith(`${id} `) && stamp !== undefined && stamp >= this.start) return true;
		}
		return false;
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
	 * A window read to its end moves the positions:
	 * - a follow window moves the cursor to the second the service was in at its last page, and,
	 *   read whole in its first page (a snapshot) from the settled position, the settled position
	 *   up to what can no longer be listed late;
	 * - a settle window moves the settled position to its end: the next one reads that second
	 *   again (a stamp with fractions of it lies after its updatedTo), unless it holds a page or more;
	 * - a baseline read is done.
	 * States that can no longer be listed in any window read are forgotten.
	 */
	completed(window: OpenWindow, snapshot = false) {
		const { purpose, from, to, openedAt, readAt, uncertainty } = window;
		if (purpose === 'recent' || purpose === 'issued') this.baseline.shift();
		if (purpose === 'follow') {
			this.cursor = Math.max(this.cursor, floorSecond(readAt - uncertainty));
			if (snapshot && from <= this.settled) {
				this.settled = Math.max(
					this.settled,
					floorSecond(openedAt - LISTED_WITHIN_MS - uncertainty),
				);
			}
		}
		if (purpose === 'settle' && to !== undefined && to >= from) {
			const full = this.countStates(to, to + SECOND_MS - 1) >= MAX_PAGE_SIZE;
			this.settled = Math.max(this.settled, full ? to + SECOND_MS : to);
		}
		this.cursor = Math.max(this.cursor, this.settled);
		for (const memory of [this.issued, this.final, this.unplaced]) memory.forgetBefore(readAt);
		// A state stays while a window may list it: stamped from the settled position on (up to a
		// day ahead), or listed within a day while its stamp gave it no place.
		for (const [key, { stamp }] of this.seen) {
			const placed =
				stamp !== undefined && stamp >= this.settled && stamp <= readAt + UNPLACED_REMEMBERED_MS;
			if (!placed && !this.unplaced.has(key)) this.seen.delete(key);
		}
	}

	toJSON(): StoredKind {
		const seen: StoredKind['seen'] = {};
		for (const [key, { updatedAt }] of this.seen) (seen[updatedAt] ??= []).push(key);
		return {
			start: this.start,
			cursor: this.cursor,
			settled: this.settled,
			seen,
			unplaced: this.unplaced.toJSON(),
			issued: this.issued.toJSON(),
			final: this.final.toJSON(),
			baseline: this.baseline,
			...(this.follow ? { follow: this.follow } : {}),
			...(this.settle ? { settle: this.settle } : {}),
			...(this.clockOffset === undefined ? {} : { clockOffset: this.clockOffset }),
		};
	}
}

/** The stored state of a kind, or undefined when there is none (or one of an older form). */
export function readStoredKind(value: unknown): StoredKind | undefined {
	const stored = (typeof value === 'object' && value !== null ? value : {}) as Partial<StoredKind>;
	if (![stored.start, stored.cursor, stored.settled].every(Number.isFinite)) return undefined;
	if (Object.values(stored.seen ?? {}).some((keys) => !Array.isArray(keys))) return undefined;
	return { seen: {}, unplaced: {}, issued: {}, final: {}, baseline: [], ...stored } as StoredKind;
}

export function timestampOf(ms: number): string {
	return toServiceTimestamp(new Date(ms));
}
