import type { IDataObject, INodeExecutionData, IPollFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { ServiceClient } from '../../transport';
import {
	FIRST_PAGE,
	MAX_PAGE_SIZE,
	pageQuery,
	paths,
	toServiceTimestamp,
	type Asset,
	type AssetFilters,
	type Invoice,
	type InvoiceFilters,
} from '../../transport/contract';
import { readPage } from '../../transport/responses';
import { ALL_EVENTS, CHOOSE_EVENT_TYPES } from '../../shared/events';
import {
	baselineWindow,
	KIND_OF_EVENT,
	POLLABLE_EVENT_TYPES,
	readWindow,
	takeNewChanges,
	testEventOf,
	windowStart,
	type PollableEventType,
	type PolledEvent,
	type PolledRecord,
	type RecordKind,
} from './changes';

/** Where the trigger keeps its windows in the node's static data. */
const STATE_KEY = 'changeWindows';

/** A window whose pages did not add up is read again this often before the poll fails. */
export const READ_ATTEMPTS = 3;

/** Fetch Test Event looks this far back (days) until it finds a record, then in every record. */
const TEST_EVENT_LOOKBACK_DAYS = [1, 30, 366];

const DAY_MS = 24 * 60 * 60_000;

/**
 * poll(): reports each change since the last successful poll once. The windows in static data
 * move on only after every page was read; a poll that fails leaves them as they were, so the
 * next poll reads the same changes again.
 */
export async function pollChanges(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
	const wanted = readWantedEvents(this);
	const kinds = [
		...new Set([...wanted].map((eventType) => KIND_OF_EVENT[eventType as PollableEventType])),
	];
	const client = new ServiceClient(this);
	if (this.getMode() === 'manual') return await fetchTestEvent(this, client, kinds, wanted);

	const staticData = this.getWorkflowStaticData('node');
	const stored = (staticData[STATE_KEY] ?? {}) as IDataObject;
	const next: IDataObject = {};
	const events: PolledEvent[] = [];
	for (const kind of kinds) {
		const window = readWindow(stored[kind]);
		const current = window ?? baselineWindow(new Date());
		const from = windowStart(current);
		const records = await readChangedRecords(this, client, kind, from);
		const taken = takeNewChanges(current, from, records, wanted, window !== undefined);
		next[kind] = taken.window as unknown as IDataObject;
		events.push(...taken.events);
	}
	// Only now, with every kind read, does the position move on.
	staticData[STATE_KEY] = next;
	if (events.length === 0) return null;
	// In the order of their time; of equal times, invoices first (a stable sort keeps the read order).
	events.sort((a, b) => (a.occurredAt ?? '').localeCompare(b.occurredAt ?? ''));
	return [this.helpers.returnJsonArray(events as unknown as IDataObject[])];
}

function readWantedEvents(context: IPollFunctions): Set<string> {
	const value = context.getNodeParameter('events', []) as unknown;
	const chosen = (Array.isArray(value) ? value : [value]).filter(
		(entry): entry is string => typeof entry === 'string' && entry !== '',
	);
	const wanted = chosen.includes(ALL_EVENTS)
		? new Set<string>(POLLABLE_EVENT_TYPES)
		: new Set(
				chosen.filter((entry) => (POLLABLE_EVENT_TYPES as readonly string[]).includes(entry)),
			);
	if (wanted.size === 0) {
		throw new NodeOperationError(context.getNode(), 'No event is selected', {
			description: `In Events, ${CHOOSE_EVENT_TYPES}. The Polling Trigger can see: ${POLLABLE_EVENT_TYPES.join(', ')}.`,
		});
	}
	return wanted;
}

/**
 * Every record of a kind changed at or after `from`, read page by page. Should the pages not add
 * up to the total the service reports (records moved between pages while they were read), the
 * window is read again; after READ_ATTEMPTS the poll fails rather than miss a change.
 */
async function readChangedRecords(
	context: IPollFunctions,
	client: ServiceClient,
	kind: RecordKind,
	from: string | undefined,
): Promise<PolledRecord[]> {
	for (let attempt = 1; ; attempt++) {
		const read = await readEveryPage(context, client, kind, from);
		if (read.records.length >= read.total) return read.records;
		if (attempt >= READ_ATTEMPTS) {
			throw new NodeOperationError(
				context.getNode(),
				`The service’s list of changed ${kind}s did not add up after ${READ_ATTEMPTS} reads`,
				{
					description: `Its pages held ${read.records.length} different ${kind}s where the service reported ${read.total}, so records moved between pages while they were read. Nothing was skipped: the next poll reads the same changes again. Should this repeat, the service’s paging may differ from what this node assumes (see docs/service-contract.md in the package’s repository); please report it.`,
				},
			);
		}
	}
}

async function readEveryPage(
	context: IPollFunctions,
	client: ServiceClient,
	kind: RecordKind,
	from: string | undefined,
): Promise<{ records: PolledRecord[]; total: number }> {
	const path = kind === 'invoice' ? paths.invoices : paths.assets;
	const byId = new Map<string, PolledRecord>();
	let total = 0;
	const changedSince: Pick<InvoiceFilters & AssetFilters, 'updatedFrom'> = from
		? { updatedFrom: from }
		: {};
	for (let page = FIRST_PAGE; ; page++) {
		const body = await client.request({
			method: 'GET',
			path,
			qs: { ...changedSince, ...pageQuery(page, MAX_PAGE_SIZE) },
		});
		const envelope = readPage<Invoice | Asset>(body);
		if (!envelope) {
			throw new NodeOperationError(
				context.getNode(),
				'The service answered a list request with an unexpected shape',
				{
					description:
						'Expected an object with an "items" array. The Data Service’s list format may have changed; please report this. Nothing was skipped: the next poll reads the same changes again.',
				},
			);
		}
		if (typeof envelope.totalItems === 'number') total = Math.max(total, envelope.totalItems);
		for (const item of envelope.items) {
			const polled = { kind, record: item } as PolledRecord;
			const id = kind === 'invoice' ? (item as Invoice).invoiceNumber : (item as Asset).assetId;
			const known = byId.get(id);
			if (!known || known.record.updatedAt < polled.record.updatedAt) byId.set(id, polled);
		}
		const readSoFar = (page - FIRST_PAGE) * MAX_PAGE_SIZE + envelope.items.length;
		if (envelope.items.length < MAX_PAGE_SIZE || readSoFar >= total) break;
	}
	return { records: [...byId.values()], total };
}

/**
 * Fetch Test Event: the newest record that matches a selected event, as the trigger would
 * report it; the windows are left untouched.
 */
async function fetchTestEvent(
	context: IPollFunctions,
	client: ServiceClient,
	kinds: RecordKind[],
	wanted: Set<string>,
): Promise<INodeExecutionData[][]> {
	for (const days of [...TEST_EVENT_LOOKBACK_DAYS, undefined]) {
		const from =
			days === undefined ? undefined : toServiceTimestamp(new Date(Date.now() - days * DAY_MS));
		let newest: PolledEvent | undefined;
		for (const kind of kinds) {
			const { records } = await readEveryPage(context, client, kind, from);
			for (const polled of records) {
				const event = testEventOf(polled, wanted);
				if (event && (!newest || polled.record.updatedAt > String(newest.data.updatedAt))) {
					newest = event;
				}
			}
		}
		if (newest) return [context.helpers.returnJsonArray([newest as unknown as IDataObject])];
	}
	throw new NodeOperationError(context.getNode(), 'No record matches the selected events yet', {
		description:
			'The service has no invoice or managed asset for the events chosen in Events. Choose more events, or issue an invoice first, then fetch a test event again.',
	});
}
