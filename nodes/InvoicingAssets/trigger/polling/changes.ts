import type { IDataObject } from 'n8n-workflow';

import {
	CHANGE_LISTED_WITHIN_MS,
	toServiceTimestamp,
	type Asset,
	type EventType,
	type Invoice,
	type ServiceEvent,
} from '../../transport/contract';
import { readServiceTime } from '../../transport/responses';

/**
 * What the Polling Trigger can tell apart from the records' current state. `asset.created` is
 * not among them: an asset carries no creation date, so a new asset is an `asset.updated`.
 */
export const POLLABLE_EVENT_TYPES = [
	'invoice.issued',
	'invoice.paid',
	'invoice.cancelled',
	'asset.updated',
	'asset.retired',
] as const satisfies readonly EventType[];
export type PollableEventType = (typeof POLLABLE_EVENT_TYPES)[number];

export type RecordKind = 'invoice' | 'asset';

export const KIND_OF_EVENT: Record<PollableEventType, RecordKind> = {
	'invoice.issued': 'invoice',
	'invoice.paid': 'invoice',
	'invoice.cancelled': 'invoice',
	'asset.updated': 'asset',
	'asset.retired': 'asset',
};

/**
 * Every poll reads again the changes of this long before the service's time: a change may reach
 * the list that long after its `updatedAt` (the contract's assumption). Only changes older than
 * that are settled; the states read within it are remembered, so none is reported twice.
 */
export const OVERLAP_MS = CHANGE_LISTED_WITHIN_MS;

/**
 * Without the service's time (an answer without a Date header) the trigger takes n8n's and
 * allows the two clocks to differ by up to the overlap: it settles twice the overlap back.
 */
export const UNKNOWN_CLOCK_TOLERANCE_MS = 2 * OVERLAP_MS;

/** At most this many records' states are remembered within the overlap per record kind. */
export const MAX_RECENT_STATES = 2000;

/** At most this many records whose stamp the trigger cannot use are remembered per record kind. */
export const MAX_UNPLACED_RECORDS = 500;

/** At most this many invoices reported as issued are remembered. */
export const MAX_ISSUED_INVOICES = 3000;

/** At most this many final states (paid, cancelled, retired) reported are remembered per record kind. */
export const MAX_FINAL_STATES = 3000;

const SECOND_MS = 1000;

/** What the trigger keeps per record kind in the workflow's static data. */
export interface KindState {
	/** The baseline (service time): no change before it is reported, nor the issue of an invoice issued before it. */
	start: string;
	/** Every change stamped before this (service time) has been read. */
	settled: string;
	/** The state (a digest, then `updatedAt`) of each record read at or after `settled`, by ID. */
	recent: Record<string, string>;
	/** Records whose `updatedAt` the trigger cannot use (unreadable, or ahead of the service's time), oldest first. */
	unplaced: string[];
	/** Invoices reported as issued, with the latest moment their issueDate can mean (epoch seconds; null when unreadable), oldest first. */
	issued: Array<[string, number | null]>;
	/** Invoices issued at or before this (service time) count as reported: the oldest forgotten ones. */
	issuedUntil?: string;
	/** The final states reported, as `status ID` (`paid INV-1`, `retired AST-1`, …), oldest first. */
	final: string[];
}

export type PolledRecord = { kind: 'invoice'; record: Invoice } | { kind: 'asset'; record: Asset };

/** One item of the trigger: the webhook trigger's event shape, with the record in `data`. */
export type PolledEvent = ServiceEvent & { subscriptionId: null; data: IDataObject };

/** A window of the list read completely: every record stamped from `from` to `to` (service time). */
export interface ReadWindow {
	/** Epoch ms, inclusive (a whole second). */
	from: number;
	/** Epoch ms, inclusive, to the end of that second; undefined: up to the service's time. */
	to?: number;
	/** The service's time when the window was read (epoch ms). */
	serviceNow: number;
	/** How far the trigger trusts `serviceNow`: the overlap, or more when it had to take n8n's clock. */
	tolerance: number;
	records: PolledRecord[];
}

/** The state of a kind that starts at the baseline `at` (service time, epoch ms). */
export function baselineState(at: number): KindState {
	const start = toServiceTimestamp(new Date(floorSecond(at)));
	return { start, settled: start, recent: {}, unplaced: [], issued: [], final: [] };
}

export function recordId(polled: PolledRecord): string | undefined {
	const id = polled.kind === 'invoice' ? polled.record.invoiceNumber : polled.record.assetId;
	return typeof id === 'string' && id !== '' ? id : undefined;
}

/** The records in the order of their `updatedAt` (unreadable last), then of their ID. */
function placeInOrder(records: PolledRecord[]) {
	const placed: Array<{ polled: PolledRecord; id: string; stamp: number | undefined }> = [];
	for (const polled of records) {
		const id = recordId(polled);
		if (id !== undefined) {
			placed.push({ polled, id, stamp: readServiceTime(polled.record.updatedAt) });
		}
	}
	return placed.sort(
		(a, b) =>
			(a.stamp ?? Number.POSITIVE_INFINITY) - (b.stamp ?? Number.POSITIVE_INFINITY) ||
			(a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
	);
}

/**
 * A record's state as remembered: a digest of every field, then its `updatedAt` as given. Two
 * changes within one second are two states; one state read twice is one.
 */
function stateKey(record: Invoice | Asset): string {
	return `${digestOf(record).slice(0, 12)} ${String(record.updatedAt)}`;
}

function stampOfKey(key: string | undefined): number | undefined {
	return key === undefined ? undefined : readServiceTime(key.slice(key.indexOf(' ') + 1));
}

/**
 * What the trigger remembers of one record kind during a poll: the stored state, changed by the
 * windows read completely, and stored again (bounded) at the end.
 */
export class ChangeMemory {
	private readonly recent: Map<string, string>;

	private readonly unplaced: string[];

	private readonly issued: Map<string, number | null>;

	private readonly final: Set<string>;

	private readonly start: number;

	private settled: number;

	private issuedUntil: number | undefined;

	constructor(private readonly stored: KindState) {
		this.recent = new Map(Object.entries(stored.recent));
		this.unplaced = [...stored.unplaced];
		this.issued = new Map(
			stored.issued.map(([id, seconds]) => [id, seconds === null ? null : seconds * SECOND_MS]),
		);
		this.final = new Set(stored.final);
		this.start = readServiceTime(stored.start) ?? 0;
		this.settled = readServiceTime(stored.settled) ?? this.start;
		this.issuedUntil = readServiceTime(stored.issuedUntil);
	}

	/** Where the next read starts (service time, epoch ms): every change before it was read. */
	get settledAt(): number {
		return this.settled;
	}

	/**
	 * The events of the changes in a window read completely that were not seen before; the
	 * position then moves on to where the window is settled. With `report: false` (the baseline)
	 * the changes are remembered and nothing is reported. A record's state older than the one
	 * remembered for it is a stale read, and skipped.
	 */
	take(window: ReadWindow, wanted: ReadonlySet<string>, report = true): PolledEvent[] {
		const aheadAfter = window.serviceNow + window.tolerance;
		const events: PolledEvent[] = [];
		for (const { polled, id, stamp } of placeInOrder(window.records)) {
			const placed = stamp !== undefined && stamp <= aheadAfter ? stamp : undefined;
			// Outside the window: the service ignored the filter, or the record's turn comes later.
			if (placed !== undefined && (placed < window.from || placed > (window.to ?? placed))) {
				continue;
			}
			const key = stateKey(polled.record);
			const known = this.recent.get(id);
			if (known === key) continue;
			const knownStamp = stampOfKey(known);
			const knownPlaced = knownStamp !== undefined && knownStamp <= aheadAfter;
			if (placed !== undefined && knownPlaced && placed < knownStamp) continue;
			const changeEvents = this.eventsOf(polled, id, key);
			this.remember(id, key, placed !== undefined);
			if (report) events.push(...changeEvents.filter((event) => wanted.has(event.eventType)));
		}
		const reachedTo = window.to ?? window.serviceNow;
		this.settle(floorSecond(Math.min(reachedTo, window.serviceNow - window.tolerance)), aheadAfter);
		return events;
	}

	/**
	 * The events one change of one record stands for:
	 * - an invoice not reported as issued yet, issued at or after the trigger's start (or whose
	 *   issue time cannot be read): invoice.issued, whatever its status now (so an invoice issued
	 *   and paid between two polls gives both events);
	 * - an invoice that is now paid or cancelled, the first time: invoice.paid or invoice.cancelled;
	 * - an asset now retired, the first time: asset.retired; any other change of an asset
	 *   (a retired asset edited again included): asset.updated.
	 * Event IDs are deterministic: one per invoice for its issue, payment and cancellation, one per
	 * asset for its retirement, and one per change (ID, `updatedAt` and digest) for an update.
	 */
	eventsOf(polled: PolledRecord, id: string, key: string): PolledEvent[] {
		const data = polled.record as unknown as IDataObject;
		const updatedAt = String(polled.record.updatedAt);
		const event = (eventType: PollableEventType, eventId: string, occurredAt: string) =>
			({ eventId, eventType, occurredAt, subscriptionId: null, data }) as PolledEvent;
		const finalEvent = (eventType: PollableEventType) => {
			const remembered = `${eventType.slice(eventType.indexOf('.') + 1)} ${id}`;
			if (this.final.has(remembered)) return [];
			this.final.add(remembered);
			return [event(eventType, `${eventType}:${id}`, updatedAt)];
		};
		if (polled.kind === 'asset') {
			const retired = polled.record.status === 'retired' ? finalEvent('asset.retired') : [];
			if (retired.length > 0) return retired;
			const eventId = `asset.updated:${id}:${updatedAt}:${key.slice(0, 8)}`;
			return [event('asset.updated', eventId, updatedAt)];
		}
		const invoice = polled.record;
		const events: PolledEvent[] = [];
		const issuedAt = readServiceTime(invoice.issueDate);
		const issuedBy = latestMomentOf(invoice.issueDate, issuedAt);
		if (!this.issued.has(id) && this.countsAsNew(issuedBy)) {
			this.issued.set(id, issuedBy ?? null);
			const occurredAt =
				issuedAt === undefined ? updatedAt : toServiceTimestamp(new Date(issuedAt));
			events.push(event('invoice.issued', `invoice.issued:${id}`, occurredAt));
		}
		if (invoice.status === 'paid') events.push(...finalEvent('invoice.paid'));
		if (invoice.status === 'cancelled') events.push(...finalEvent('invoice.cancelled'));
		return events;
	}

	/**
	 * Issued (at the latest moment its issueDate can mean) at or after the start, and after the
	 * invoices forgotten; an issueDate that cannot be read counts as new.
	 */
	private countsAsNew(issuedAt: number | undefined): boolean {
		if (issuedAt === undefined) return true;
		return (
			issuedAt >= this.start && (this.issuedUntil === undefined || issuedAt > this.issuedUntil)
		);
	}

	private remember(id: string, key: string, placed: boolean) {
		this.recent.set(id, key);
		const at = this.unplaced.indexOf(id);
		if (at !== -1) this.unplaced.splice(at, 1);
		if (!placed) this.unplaced.push(id);
	}

	/**
	 * Moves the settled position to `to` (never back) and forgets what the next reads no longer
	 * reach, within the bounds: should more than MAX_RECENT_STATES states remain, the oldest
	 * seconds are settled early, whole (a change written into them later would be missed, never
	 * one reported twice); the oldest unplaced records, issued invoices and final states beyond
	 * their bounds are forgotten.
	 */
	private settle(to: number, aheadAfter: number) {
		this.settled = Math.max(this.settled, to);
		for (let index = this.unplaced.length - 1; index >= 0; index--) {
			const stamp = stampOfKey(this.recent.get(this.unplaced[index]));
			if (stamp !== undefined && stamp <= aheadAfter) this.unplaced.splice(index, 1);
		}
		while (this.unplaced.length > MAX_UNPLACED_RECORDS) {
			this.recent.delete(this.unplaced.shift() as string);
		}
		const unplaced = new Set(this.unplaced);
		const kept: number[] = [];
		for (const [id, key] of this.recent) {
			if (unplaced.has(id)) continue;
			const stamp = stampOfKey(key);
			if (stamp === undefined || stamp < this.settled) this.recent.delete(id);
			else kept.push(stamp);
		}
		if (kept.length > MAX_RECENT_STATES) {
			kept.sort((a, b) => a - b);
			this.settled = floorSecond(kept[kept.length - MAX_RECENT_STATES - 1]) + SECOND_MS;
			for (const [id, key] of this.recent) {
				const stamp = stampOfKey(key);
				if (!unplaced.has(id) && stamp !== undefined && stamp < this.settled) {
					this.recent.delete(id);
				}
			}
		}
		if (this.issued.size > MAX_ISSUED_INVOICES) {
			for (const [id, issuedAt] of this.issuedByTime().slice(
				0,
				this.issued.size - MAX_ISSUED_INVOICES,
			)) {
				this.issued.delete(id);
				if (issuedAt !== null) this.issuedUntil = Math.max(this.issuedUntil ?? 0, issuedAt);
			}
		}
		while (this.final.size > MAX_FINAL_STATES) {
			this.final.delete(this.final.values().next().value as string);
		}
	}

	/** The issued invoices, oldest issue first (unreadable times last). */
	private issuedByTime(): Array<[string, number | null]> {
		return [...this.issued].sort(
			(a, b) => (a[1] ?? Number.POSITIVE_INFINITY) - (b[1] ?? Number.POSITIVE_INFINITY),
		);
	}

	state(): KindState {
		return {
			start: this.stored.start,
			settled: toServiceTimestamp(new Date(this.settled)),
			recent: Object.fromEntries(this.recent),
			unplaced: [...this.unplaced],
			// Rounded up, so that a time read back never lies before the one remembered.
			issued: this.issuedByTime().map(([id, at]) => [
				id,
				at === null ? null : Math.ceil(at / SECOND_MS),
			]),
			...(this.issuedUntil === undefined
				? {}
				: {
						issuedUntil: toServiceTimestamp(
							new Date(Math.ceil(this.issuedUntil / SECOND_MS) * SECOND_MS),
						),
					}),
			final: [...this.final],
		};
	}
}

/** The latest moment a time can mean: the end of its day when it is a date alone. */
function latestMomentOf(text: unknown, time: number | undefined): number | undefined {
	const dateOnly = typeof text === 'string' && /^\s*\d{4}-\d{2}-\d{2}\s*$/.test(text);
	return time !== undefined && dateOnly ? time + 24 * 60 * 60_000 - 1 : time;
}

/** The newest record's event for Fetch Test Event: the most telling selected event of its state. */
export function testEventOf(
	polled: PolledRecord,
	wanted: ReadonlySet<string>,
): PolledEvent | undefined {
	const id = recordId(polled);
	if (id === undefined) return undefined;
	const memory = new ChangeMemory(baselineState(0));
	const events = memory
		.eventsOf(polled, id, stateKey(polled.record))
		.filter((event) => wanted.has(event.eventType));
	return events[events.length - 1];
}

/** The state stored for a kind, or undefined when there is none (or it is unreadable). */
export function readKindState(value: unknown): KindState | undefined {
	if (typeof value !== 'object' || value === null) return undefined;
	const stored = value as Record<string, unknown>;
	const { start, settled, recent, unplaced, issued, issuedUntil, final } = stored;
	if (readServiceTime(start) === undefined || readServiceTime(settled) === undefined) {
		return undefined;
	}
	const strings = (list: unknown) =>
		Array.isArray(list) ? list.filter((entry): entry is string => typeof entry === 'string') : [];
	const state: KindState = {
		start: start as string,
		settled: settled as string,
		recent: {},
		unplaced: strings(unplaced),
		issued: [],
		final: strings(final),
	};
	if (typeof recent === 'object' && recent !== null) {
		for (const [id, key] of Object.entries(recent)) {
			if (typeof key === 'string') state.recent[id] = key;
		}
	}
	if (Array.isArray(issued)) {
		for (const entry of issued) {
			if (
				Array.isArray(entry) &&
				typeof entry[0] === 'string' &&
				(entry[1] === null || typeof entry[1] === 'number')
			) {
				state.issued.push([entry[0], entry[1] as number | null]);
			}
		}
	}
	if (readServiceTime(issuedUntil) !== undefined) state.issuedUntil = issuedUntil as string;
	return state;
}

/** The order events are reported in: by the time they occurred (unreadable last); a stable sort keeps ties in reading order. */
export function byOccurrence(a: PolledEvent, b: PolledEvent): number {
	const at = (event: PolledEvent) => readServiceTime(event.occurredAt) ?? Number.POSITIVE_INFINITY;
	return at(a) - at(b);
}

export function floorSecond(ms: number): number {
	return Math.floor(ms / SECOND_MS) * SECOND_MS;
}

/**
 * A digest of a record's state: 64 bits of FNV-1a over its JSON with the keys sorted, as 16 hex
 * digits. The same state gives the same digest in every n8n process.
 */
export function digestOf(record: unknown): string {
	const text = canonicalJson(record);
	let low = 0x811c9dc5;
	let high = 0xcbf29ce4;
	for (let index = 0; index < text.length; index++) {
		const code = text.charCodeAt(index);
		low = Math.imul(low ^ code, 0x01000193) >>> 0;
		high = Math.imul(high ^ code ^ (low >>> 7), 0x01000193) >>> 0;
	}
	return high.toString(16).padStart(8, '0') + low.toString(16).padStart(8, '0');
}

function canonicalJson(value: unknown): string {
	if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
	if (typeof value === 'object' && value !== null) {
		const entries = Object.entries(value as Record<string, unknown>)
			.filter(([, entry]) => entry !== undefined)
			.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
		return `{${entries.map(([key, entry]) => `${JSON.stringify(key)}:${canonicalJson(entry)}`).join(',')}}`;
	}
	return JSON.stringify(value) ?? 'null';
}
