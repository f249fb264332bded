import type { Asset, Invoice } from '../../../nodes/InvoicingAssets/transport/contract';
import {
	baselineWindow,
	MAX_REMEMBERED_CHANGES,
	OVERLAP_MS,
	POLLABLE_EVENT_TYPES,
	readWindow,
	takeNewChanges,
	windowStart,
	type ChangeWindow,
	type PolledRecord,
} from '../../../nodes/InvoicingAssets/trigger/polling/changes';

const ALL = new Set<string>(POLLABLE_EVENT_TYPES);
const T0 = Date.UTC(2026, 10, 23, 12, 0, 0);

function at(seconds: number): string {
	return new Date(T0 + seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function invoice(number: number, issuedAt: number, updatedAt = issuedAt, status = 'issued') {
	return {
		kind: 'invoice',
		record: {
			invoiceNumber: `INV-${number}`,
			issueDate: at(issuedAt),
			updatedAt: at(updatedAt),
			status,
		} as unknown as Invoice,
	} as PolledRecord;
}

function asset(id: number, updatedAt: number, status = 'active') {
	return {
		kind: 'asset',
		record: { assetId: `AST-${id}`, updatedAt: at(updatedAt), status } as unknown as Asset,
	} as PolledRecord;
}

const start: ChangeWindow = { cursor: at(0), seen: {} };

function poll(window: ChangeWindow, records: PolledRecord[], wanted = ALL) {
	const from = windowStart(window);
	const visible = records.filter((polled) => polled.record.updatedAt >= from);
	return takeNewChanges(window, from, visible, wanted);
}

function count(window: ChangeWindow): number {
	return Object.values(window.seen).reduce((sum, ids) => sum + ids.length, 0);
}

describe('the Polling Trigger’s change window', () => {
	test('reads the overlap before the newest change seen, and reports a late change in it once', () => {
		const first = poll(start, [invoice(1, 100)]);
		expect(first.events.map((event) => event.eventId)).toEqual(['invoice.issued:INV-1']);
		expect(first.window.cursor).toBe(at(100));
		expect(windowStart(first.window)).toBe(at(100 - OVERLAP_MS / 1000));

		// INV-2 is written late with an earlier updatedAt (within the overlap); INV-1 is read again.
		const second = poll(first.window, [invoice(1, 100), invoice(2, 60)]);
		expect(second.events.map((event) => event.eventId)).toEqual(['invoice.issued:INV-2']);
		expect(poll(second.window, [invoice(1, 100), invoice(2, 60)]).events).toEqual([]);
	});

	test('tells apart records changed in the same second', () => {
		const first = poll(start, [invoice(1, 100), invoice(2, 100)]);
		const second = poll(first.window, [invoice(1, 100), invoice(2, 100), invoice(3, 100)]);
		expect(second.events.map((event) => event.eventId)).toEqual(['invoice.issued:INV-3']);
	});

	test('ignores records outside the window when the service does not filter', () => {
		const first = poll(start, [invoice(1, 1000)]);
		const old = invoice(2, 1000 - OVERLAP_MS / 1000 - 1);
		expect(takeNewChanges(first.window, windowStart(first.window), [old], ALL).events).toEqual([]);
	});

	test('an invoice issued and paid between polls is issued and paid; one seen issued is only paid', () => {
		const both = poll(start, [invoice(1, 10, 20, 'paid')]);
		expect(both.events.map((event) => event.eventType)).toEqual(['invoice.issued', 'invoice.paid']);
		const issued = poll(start, [invoice(2, 10)]);
		const paid = poll(issued.window, [invoice(2, 10, 20, 'paid')]);
		expect(paid.events.map((event) => event.eventId)).toEqual(['invoice.paid:INV-2']);
	});

	test('asset updates are one event per change; a retired asset is asset.retired', () => {
		const first = poll(start, [asset(1, 10), asset(2, 10, 'retired')]);
		expect(first.events.map((event) => event.eventId)).toEqual([
			`asset.updated:AST-1:${at(10)}`,
			'asset.retired:AST-2',
		]);
		const second = poll(first.window, [asset(1, 30), asset(2, 10, 'retired')]);
		expect(second.events.map((event) => event.eventId)).toEqual([`asset.updated:AST-1:${at(30)}`]);
	});

	test('the baseline reports nothing, and later polls report only what came after it', () => {
		const now = new Date(T0 + 3600_000);
		const window = baselineWindow(now);
		const taken = takeNewChanges(window, windowStart(window), [invoice(1, 3500)], ALL, false);
		expect(taken.events).toEqual([]);
		expect(poll(taken.window, [invoice(1, 3500), invoice(2, 3590)]).events).toHaveLength(1);
	});

	test(`remembers at most ${MAX_REMEMBERED_CHANGES} changes, and never reports a forgotten one again`, () => {
		const burst = Array.from({ length: MAX_REMEMBERED_CHANGES + 500 }, (_, i) =>
			invoice(i, 100 + Math.floor(i / 100)),
		);
		const first = poll(start, burst);
		expect(first.events).toHaveLength(burst.length);
		expect(count(first.window)).toBeLessThanOrEqual(MAX_REMEMBERED_CHANGES);
		expect(first.window.floor).toBeDefined();
		expect(JSON.stringify(first.window).length).toBeLessThan(MAX_REMEMBERED_CHANGES * 40);
		expect(poll(first.window, burst).events).toEqual([]);
	});

	test('forgets changes older than the overlap', () => {
		const first = poll(start, [invoice(1, 10)]);
		const later = poll(first.window, [invoice(2, 10 + OVERLAP_MS / 1000 + 60)]);
		expect(Object.values(later.window.seen).flat()).toEqual(['INV-2']);
	});

	test('reads back what it stored, and nothing from a foreign shape', () => {
		const { window } = poll(start, [invoice(1, 10)]);
		expect(readWindow(JSON.parse(JSON.stringify(window)))).toEqual(window);
		expect(readWindow({ cursor: 3 })).toBeUndefined();
		expect(readWindow('x')).toBeUndefined();
	});
});
