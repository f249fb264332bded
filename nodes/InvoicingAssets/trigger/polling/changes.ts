import type { IDataObject } from 'n8n-workflow';

import {
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

/** The record kind an event type is about: its first word. */
export function kindOf(eventType: string): RecordKind {
	return eventType.startsWith('invoice.') ? 'invoice' : 'asset';
}

export const SECOND_MS = 1000;
export const DAY_MS = 24 * 60 * 60 * SECOND_MS;

export type PolledRecord = { kind: 'invoice'; record: Invoice } | { kind: 'asset'; record: Asset };

/** One item of the trigger: the webhook trigger's event shape, with the record in `data`. */
export type PolledEvent = ServiceEvent & { subscriptionId: null; data: IDataObject };

/** What the trigger has reported of records before: their issue and their final states. */
export interface ReportedBefore {
	/** Whether this invoice is to be reported as issued now (and, if so, remembers it). */
	reportIssue(invoiceNumber: string, invoice: Invoice): boolean;
	/** Whether this final state (`paid`, `cancelled`, `retired`) of the record is new (and remembers it). */
	reportFinal(status: string, id: string): boolean;
}

export function recordId(polled: PolledRecord): string | undefined {
	const id = polled.kind === 'invoice' ? polled.record.invoiceNumber : polled.record.assetId;
	return typeof id === 'string' && id !== '' ? id : undefined;
}

/**
 * The events one newly read state of a record stands for:
 * - an invoice to be reported as issued (see ReportedBefore): invoice.issued, whatever its status
 *   now, so an invoice issued and paid between two polls gives both events;
 * - an invoice now paid or cancelled, the first time: invoice.paid or invoice.cancelled;
 * - an asset now retired, the first time: asset.retired; any other state of an asset (a retired
 *   asset edited again included): asset.updated.
 * Event IDs are deterministic (docs/choosing-a-trigger.md lists them).
 */
export function eventsOf(
	polled: PolledRecord,
	id: string,
	digest: string,
	before: ReportedBefore,
): PolledEvent[] {
	const data = polled.record as unknown as IDataObject;
	const updatedAt = String(polled.record.updatedAt);
	const event = (eventType: PollableEventType, eventId: string, occurredAt = updatedAt) =>
		({ eventId, eventType, occurredAt, subscriptionId: null, data }) as PolledEvent;
	if (polled.kind === 'asset') {
		if (polled.record.status === 'retired' && before.reportFinal('retired', id)) {
			return [event('asset.retired', `asset.retired:${id}`)];
		}
		return [event('asset.updated', `asset.updated:${id}:${updatedAt}:${digest.slice(0, 8)}`)];
	}
	const invoice = polled.record;
	const events: PolledEvent[] = [];
	if (before.reportIssue(id, invoice)) {
		const issuedAt = readServiceTime(invoice.issueDate);
		const occurredAt = issuedAt === undefined ? updatedAt : toServiceTimestamp(new Date(issuedAt));
		events.push(event('invoice.issued', `invoice.issued:${id}`, occurredAt));
	}
	for (const status of ['paid', 'cancelled'] as const) {
		if (invoice.status === status && before.reportFinal(status, id)) {
			events.push(event(`invoice.${status}`, `invoice.${status}:${id}`));
		}
	}
	return events;
}

/** The latest moment an invoice's issueDate can mean: the end of its day when it is a date alone. */
export function latestIssueMoment(invoice: Invoice): number | undefined {
	const time = readServiceTime(invoice.issueDate);
	const dateOnly =
		typeof invoice.issueDate === 'string' && /^\s*\d{4}-\d{2}-\d{2}\s*$/.test(invoice.issueDate);
	return time !== undefined && dateOnly ? time + DAY_MS - 1 : time;
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
