import type { IDataObject } from 'n8n-workflow';

import {
	toServiceTimestamp,
	type Asset,
	type EventType,
	type Invoice,
	type ServiceEvent,
} from '../../transport/contract';

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
 * Every poll reads again the changes of this long before the newest change it has seen, so a
 * change written late (the same second as the last one seen, a transaction still open, a
 * record changed while the pages were read) is not missed. The keys of the changes in that
 * window are kept, so none is reported twice.
 */
export const OVERLAP_MS = 5 * 60_000;

/**
 * The first poll (the baseline) reads the changes of the last hour by n8n's clock and reports
 * none of them. So the service's clock may be up to an hour ahead of or behind n8n's.
 */
export const BASELINE_LOOKBACK_MS = 60 * 60_000;

/** At most this many change keys are kept per record kind (about 40 bytes each). */
export const MAX_REMEMBERED_CHANGES = 5000;

/** What the trigger keeps per record kind in the workflow's static data. */
export interface ChangeWindow {
	/** The newest `updatedAt` seen (service time); at first, the baseline's start. */
	cursor: string;
	/** Changes reported (or taken as the baseline), by `updatedAt`: record IDs. */
	seen: Record<string, string[]>;
	/** Set when changes had to be forgotten early: the window never reaches back to this time. */
	floor?: string;
}

export type PolledRecord = { kind: 'invoice'; record: Invoice } | { kind: 'asset'; record: Asset };

/** One item of the trigger: the webhook trigger's event shape, with the record in `data`. */
export type PolledEvent = ServiceEvent & { subscriptionId: null; data: IDataObject };

export function baselineWindow(now: Date): ChangeWindow {
	return { cursor: toServiceTimestamp(new Date(now.getTime() - BASELINE_LOOKBACK_MS)), seen: {} };
}

/** The `updatedFrom` of the next read: the overlap before the cursor, never at or before the floor. */
export function windowStart(window: ChangeWindow): string {
	const overlapStart = toServiceTimestamp(new Date(Date.parse(window.cursor) - OVERLAP_MS));
	if (window.floor === undefined) return overlapStart;
	const afterFloor = toServiceTimestamp(new Date(Date.parse(window.floor) + 1000));
	return afterFloor > overlapStart ? afterFloor : overlapStart;
}

export function recordId(polled: PolledRecord): string {
	return polled.kind === 'invoice' ? polled.record.invoiceNumber : polled.record.assetId;
}

/**
 * The events of the changes read from `from` on that the window has not seen, in the order of
 * their time, and the window that remembers them. With `report: false` (the baseline) the changes
 * are remembered and nothing is reported.
 */
export function takeNewChanges(
	window: ChangeWindow,
	from: string,
	records: PolledRecord[],
	wanted: ReadonlySet<string>,
	report = true,
): { events: PolledEvent[]; window: ChangeWindow } {
	const seen: Record<string, string[]> = {};
	for (const [at, ids] of Object.entries(window.seen)) seen[at] = [...ids];
	const hasSeen = (at: string, id: string) => seen[at]?.includes(id) ?? false;
	let cursor = window.cursor;
	const events: PolledEvent[] = [];

	const ordered = records
		.filter((polled) => typeof polled.record.updatedAt === 'string')
		.sort(
			(a, b) =>
				compare(a.record.updatedAt, b.record.updatedAt) || compare(recordId(a), recordId(b)),
		);
	for (const polled of ordered) {
		const id = recordId(polled);
		const at = polled.record.updatedAt;
		// A record outside the window was handled before (the service may ignore the filter).
		if (at < from || hasSeen(at, id)) continue;
		const changeEvents = eventsOfChange(polled, from, hasSeen);
		(seen[at] ??= []).push(id);
		if (at > cursor) cursor = at;
		if (report) events.push(...changeEvents.filter((event) => wanted.has(event.eventType)));
	}
	events.sort((a, b) => compare(a.occurredAt ?? '', b.occurredAt ?? ''));
	return { events, window: forgetOld({ cursor, seen, floor: window.floor }) };
}

/**
 * The events one change of one record stands for, judged from the record as it is now:
 * - an invoice issued within the window whose first state the trigger has not seen: invoice.issued
 *   (so an invoice issued and paid between two polls gives both events);
 * - an invoice that is now paid or cancelled: invoice.paid or invoice.cancelled;
 * - an asset now retired: asset.retired; any other asset change: asset.updated.
 * Event IDs are deterministic: one per invoice for its issue, payment and cancellation, one per
 * asset for its retirement, and one per change (ID and updatedAt) for an asset update.
 */
function eventsOfChange(
	polled: PolledRecord,
	from: string,
	hasSeen: (at: string, id: string) => boolean,
): PolledEvent[] {
	const data = polled.record as unknown as IDataObject;
	const event = (eventType: PollableEventType, eventId: string, occurredAt: string) =>
		({ eventId, eventType, occurredAt, subscriptionId: null, data }) as PolledEvent;
	if (polled.kind === 'asset') {
		const asset = polled.record;
		return asset.status === 'retired'
			? [event('asset.retired', `asset.retired:${asset.assetId}`, asset.updatedAt)]
			: [
					event(
						'asset.updated',
						`asset.updated:${asset.assetId}:${asset.updatedAt}`,
						asset.updatedAt,
					),
				];
	}
	const invoice = polled.record;
	const id = invoice.invoiceNumber;
	const events: PolledEvent[] = [];
	const issueDate = typeof invoice.issueDate === 'string' ? invoice.issueDate : '';
	if (issueDate >= from && !hasSeen(issueDate, id)) {
		events.push(event('invoice.issued', `invoice.issued:${id}`, issueDate));
	}
	if (invoice.status === 'paid') {
		events.push(event('invoice.paid', `invoice.paid:${id}`, invoice.updatedAt));
	}
	if (invoice.status === 'cancelled') {
		events.push(event('invoice.cancelled', `invoice.cancelled:${id}`, invoice.updatedAt));
	}
	return events;
}

/**
 * Forgets the changes the next read no longer reaches (before the overlap). Should more than
 * MAX_REMEMBERED_CHANGES remain, the oldest seconds are forgotten whole and the floor keeps the
 * next reads after them, so that no forgotten change is reported again.
 */
function forgetOld(window: ChangeWindow): ChangeWindow {
	const overlapStart = windowStart({ cursor: window.cursor, seen: {} });
	let floor = window.floor !== undefined && window.floor >= overlapStart ? window.floor : undefined;
	const from = windowStart({ cursor: window.cursor, seen: {}, floor });
	const times = Object.keys(window.seen)
		.filter((at) => at >= from)
		.sort(compare);
	let count = times.reduce((sum, at) => sum + window.seen[at].length, 0);
	while (count > MAX_REMEMBERED_CHANGES && times.length > 0) {
		const oldest = times.shift() as string;
		count -= window.seen[oldest].length;
		floor = oldest;
	}
	const seen: Record<string, string[]> = {};
	for (const at of times) seen[at] = window.seen[at];
	return floor === undefined
		? { cursor: window.cursor, seen }
		: { cursor: window.cursor, seen, floor };
}

/** The newest record's event for Fetch Test Event: the most telling selected event of its state. */
export function testEventOf(
	polled: PolledRecord,
	wanted: ReadonlySet<string>,
): PolledEvent | undefined {
	const events = eventsOfChange(polled, '', () => false).filter((event) =>
		wanted.has(event.eventType),
	);
	return events[events.length - 1];
}

/** The window stored for a kind, or undefined when there is none (or it is unreadable). */
export function readWindow(value: unknown): ChangeWindow | undefined {
	if (typeof value !== 'object' || value === null) return undefined;
	const { cursor, seen, floor } = value as Record<string, unknown>;
	if (typeof cursor !== 'string' || typeof seen !== 'object' || seen === null) return undefined;
	const window: ChangeWindow = { cursor, seen: {} };
	for (const [at, ids] of Object.entries(seen)) {
		if (Array.isArray(ids)) window.seen[at] = ids.filter((id) => typeof id === 'string');
	}
	if (typeof floor === 'string') window.floor = floor;
	return window;
}

function compare(a: string, b: string): number {
	return a < b ? -1 : a > b ? 1 : 0;
}
