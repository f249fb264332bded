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
import type { ListWindow } from './window';

/** What polling can tell from records' current state: not `asset.created` (an asset has no creation date). */
export const POLLABLE_EVENT_TYPES = [
	'invoice.issued',
	'invoice.paid',
	'invoice.cancelled',
	'invoice.overdue',
	'asset.updated',
	'asset.retired',
] as const satisfies readonly EventType[];
export type PollableEventType = (typeof POLLABLE_EVENT_TYPES)[number];

export type RecordKind = 'invoice' | 'asset';

export function kindOf(eventType: string): RecordKind {
	return eventType.startsWith('invoice.') ? 'invoice' : 'asset';
}

export const SECOND_MS = 1000;
export const DAY_MS = 24 * 60 * 60 * SECOND_MS;
/** How long after its issueDate an invoice first seen is reported as issued. */
export const ISSUED_WITHIN_MS = 3 * DAY_MS;
/** How long a status reported (paid, cancelled, overdue, retired) is remembered. */
export const STATUS_REMEMBERED_MS = 30 * DAY_MS;
/** How long after it was last listed a state whose stamp gives it no place in time is remembered. */
export const UNPLACED_REMEMBERED_MS = DAY_MS;

export type PolledRecord = { kind: 'invoice'; record: Invoice } | { kind: 'asset'; record: Asset };

/** One item of the trigger: the webhook trigger's event shape, with the record in `data`. */
export type PolledEvent = ServiceEvent & { subscriptionId: null; data: IDataObject };

/** What the trigger reported of records before: whether to report this now (it is then remembered). */
export type ReportedBefore = Pick<RecordStates, 'reportIssue' | 'reportStatus'>;

/** As stored: `seen` is `ID digest` by `updatedAt`; the rest by the day they may be forgotten. */
export interface StoredStates {
	seen: Record<string, string[]>;
	unplaced: Record<string, string[]>;
	issued: Record<string, string[]>;
	statuses: Record<string, string[]>;
}

/** Keys that expire, stored by the day (epoch days) they may be forgotten: compact and exact. */
class ExpiringSet {
	private readonly expiry = new Map<string, number>();

	constructor(stored: Record<string, string[]> = {}, migrate = (key: string) => key) {
		for (const [day, keys] of Object.entries(stored)) {
			for (const key of keys) this.expiry.set(migrate(key), Number(day));
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

/** The record states a kind read: one not read before is reported, whatever its stamp (invariant 3). */
export class RecordStates {
	/** `ID digest` → the state's `updatedAt` as given, and the moment it means. */
	private readonly seen = new Map<string, { updatedAt: string; stamp: number | undefined }>();
	private readonly unplaced: ExpiringSet;
	private readonly issued: ExpiringSet;
	private readonly statuses: ExpiringSet;
	/** The service's time of the page being read: what issues and statuses are timed by. */
	serviceTime = 0;

	constructor(
		/** Changes stamped before the start are not reported. */
		private readonly start: number,
		stored: Partial<StoredStates>,
	) {
		for (const [updatedAt, keys] of Object.entries(stored.seen ?? {})) {
			const stamp = readServiceTime(updatedAt);
			for (const key of keys) this.seen.set(shortDigestKey(key), { updatedAt, stamp });
		}
		this.unplaced = new ExpiringSet(stored.unplaced, shortDigestKey);
		this.issued = new ExpiringSet(stored.issued);
		// 0.1.0 stored the statuses reported as `final`.
		this.statuses = new ExpiringSet({
			...(stored as { final?: StoredStates['statuses'] }).final,
			...stored.statuses,
		});
	}

	/** The record states kept, stamped within [from, to] when given. */
	count(from = Number.NEGATIVE_INFINITY, to = Number.POSITIVE_INFINITY): number {
		if (from === Number.NEGATIVE_INFINITY && to === Number.POSITIVE_INFINITY) return this.seen.size;
		let count = 0;
		for (const { stamp } of this.seen.values()) {
			if (stamp !== undefined && stamp >= from && stamp <= to) count += 1;
		}
		return count;
	}

	/** The events of a record state a window read, when not read before; the baseline's reads report nothing. */
	accept(polled: PolledRecord, window: ListWindow): PolledEvent[] {
		const now = window.readAt;
		this.serviceTime = now;
		const id = recordId(polled);
		if (id === undefined) return [];
		const { record } = polled;
		const stamp = readServiceTime(record.updatedAt);
		const inTime =
			stamp !== undefined && stamp <= now + window.uncertainty + CHANGE_LISTED_WITHIN_MS;
		const issue = polled.kind === 'invoice' ? issueOf(polled.record) : undefined;
		if (window.purpose === 'issued') {
			// Only an invoice whose state is older than the listing bound was surely listed before the start.
			const listedBefore =
				inTime && stamp < this.start - CHANGE_LISTED_WITHIN_MS - window.uncertainty;
			if (listedBefore && issue) this.reportIssue(id, issue);
			return [];
		}
		// Outside the window: a service that ignores the filter; the record's own window reads it.
		if (inTime && (stamp < window.from || stamp >= (window.to ?? stamp) + SECOND_MS)) return [];
		// Listed at the start: its invoice is not reported as issued; a state of the start's second
		// is remembered (the follow read that starts there reports what it has not read).
		if (window.purpose === 'recent') {
			if (issue) this.reportIssue(id, issue);
			if (inTime && stamp < this.start) return [];
		}
		const digest = digestOf(record);
		const key = `${id} ${digest}`;
		if (!inTime) this.unplaced.add(key, now + UNPLACED_REMEMBERED_MS);
		if (this.seen.has(key)) return [];
		this.seen.set(key, { updatedAt: String(record.updatedAt), stamp });
		if (window.purpose === 'recent') return [];
		const events = eventsOf(polled, id, digest, this, issue);
		// Stamped before the start: a change from before it, unless the record was issued or changed
		// after it (its writer's clock is behind).
		if (!inTime || stamp >= this.start || this.changedSinceStart(id, issue)) return events;
		return events.filter(({ eventType }) => eventType === 'invoice.issued');
	}

	private changedSinceStart(id: string, issue: IssueMoments | undefined): boolean {
		if ((issue?.latest ?? 0) >= this.start) return true;
		for (const [key, { stamp }] of this.seen) {
			if (key.startsWith(`${id} `) && stamp !== undefined && stamp >= this.start) return true;
		}
		return false;
	}

	reportIssue(invoiceNumber: string, { latest }: IssueMoments): boolean {
		if (this.issued.has(invoiceNumber)) return false;
		if (latest !== undefined && latest + ISSUED_WITHIN_MS < this.serviceTime) return false;
		// An issueDate that cannot be read: reported once, and remembered as long as statuses.
		const until =
			latest === undefined ? this.serviceTime + STATUS_REMEMBERED_MS : latest + ISSUED_WITHIN_MS;
		this.issued.add(invoiceNumber, until);
		return true;
	}

	reportStatus(status: string, id: string): boolean {
		const key = `${status} ${id}`;
		if (this.statuses.has(key)) return false;
		this.statuses.add(key, this.serviceTime + STATUS_REMEMBERED_MS);
		return true;
	}

	/** Forgets what no window lists any more: states stamped before `settled` or a day past `now`, unless unplaced. */
	forget(settled: number, now: number) {
		for (const memory of [this.issued, this.statuses, this.unplaced]) memory.forgetBefore(now);
		for (const [key, { stamp }] of this.seen) {
			const listable =
				stamp !== undefined && stamp >= settled && stamp <= now + UNPLACED_REMEMBERED_MS;
			if (!listable && !this.unplaced.has(key)) this.seen.delete(key);
		}
	}

	toJSON(): StoredStates {
		const seen: StoredStates['seen'] = {};
		for (const [key, { updatedAt }] of this.seen) (seen[updatedAt] ??= []).push(key);
		return {
			seen,
			unplaced: this.unplaced.toJSON(),
			issued: this.issued.toJSON(),
			statuses: this.statuses.toJSON(),
		};
	}
}

export function recordId(polled: PolledRecord): string | undefined {
	const id = polled.kind === 'invoice' ? polled.record.invoiceNumber : polled.record.assetId;
	return typeof id === 'string' && id !== '' ? id : undefined;
}

/** An invoice's issueDate as a moment, and the latest it can mean (a date alone: its whole day). */
export type IssueMoments = { issuedAt: number | undefined; latest: number | undefined };

function issueOf(invoice: Invoice): IssueMoments {
	const issuedAt = readServiceTime(invoice.issueDate);
	const dateOnly =
		typeof invoice.issueDate === 'string' && /^\s*\d{4}-\d{2}-\d{2}\s*$/.test(invoice.issueDate);
	return {
		issuedAt,
		latest: issuedAt !== undefined && dateOnly ? issuedAt + DAY_MS - 1 : issuedAt,
	};
}

/** The events a newly read state stands for (docs/choosing-a-trigger.md#what-polling-can-and-cannot-see). */
export function eventsOf(
	polled: PolledRecord,
	id: string,
	digest: string,
	before: ReportedBefore,
	issue?: IssueMoments,
): PolledEvent[] {
	const data = polled.record as unknown as IDataObject;
	const updatedAt = String(polled.record.updatedAt);
	const event = (eventType: PollableEventType, eventId: string, occurredAt = updatedAt) =>
		({ eventId, eventType, occurredAt, subscriptionId: null, data }) as PolledEvent;
	if (polled.kind === 'asset') {
		if (polled.record.status === 'retired' && before.reportStatus('retired', id)) {
			return [event('asset.retired', `asset.retired:${id}`)];
		}
		return [event('asset.updated', `asset.updated:${id}:${updatedAt}:${digest}`)];
	}
	const invoice = polled.record;
	const events: PolledEvent[] = [];
	const moments = issue ?? issueOf(invoice);
	if (before.reportIssue(id, moments)) {
		const { issuedAt } = moments;
		const occurredAt = issuedAt === undefined ? updatedAt : toServiceTimestamp(new Date(issuedAt));
		events.push(event('invoice.issued', `invoice.issued:${id}`, occurredAt));
	}
	for (const status of ['paid', 'cancelled', 'overdue'] as const) {
		if (invoice.status === status && before.reportStatus(status, id)) {
			events.push(event(`invoice.${status}`, `invoice.${status}:${id}`));
		}
	}
	return events;
}

/** The order events are reported in: by the time they occurred (unreadable last); a stable sort keeps ties in reading order. */
export function byOccurrence(a: PolledEvent, b: PolledEvent): number {
	const at = (event: PolledEvent) => readServiceTime(event.occurredAt) ?? Number.POSITIVE_INFINITY;
	return at(a) - at(b);
}

export function floorSecond(ms: number): number {
	return Math.floor(ms / SECOND_MS) * SECOND_MS;
}

// Bound once: a global looked up per character is slow in some sandboxes (Jest's: 100 times).
const { imul } = Math;
/** A record state's digest, the same in every n8n process: 8 hex digits of FNV-1a over its canonical JSON. */
export function digestOf(record: unknown): string {
	const text = canonicalJson(record);
	let low = 0x811c9dc5;
	let high = 0xcbf29ce4;
	for (let index = 0; index < text.length; index++) {
		const code = text.charCodeAt(index);
		low = imul(low ^ code, 0x01000193) >>> 0;
		high = imul(high ^ code ^ (low >>> 7), 0x01000193) >>> 0;
	}
	return high.toString(16).padStart(8, '0');
}

/** A stored `ID digest` key of 0.1.0, whose digests had 12 digits, as kept now. */
function shortDigestKey(key: string): string {
	return /^.* [0-9a-f]{12}$/.test(key) ? key.slice(0, -4) : key;
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
