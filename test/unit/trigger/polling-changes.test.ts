import type { Asset, Invoice } from '../../../nodes/InvoicingAssets/transport/contract';
import { readServiceTime } from '../../../nodes/InvoicingAssets/transport/responses';
import { CHANGE_LISTED_WITHIN_MS as LISTED_WITHIN_MS } from '../../../nodes/InvoicingAssets/transport/contract';
import {
	digestOf,
	STATUS_REMEMBERED_MS,
	ISSUED_WITHIN_MS,
	type PolledRecord,
} from '../../../nodes/InvoicingAssets/trigger/polling/changes';
import { KindMemory, readStoredKind } from '../../../nodes/InvoicingAssets/trigger/polling/memory';
import type {
	ListWindow,
	WindowPurpose,
} from '../../../nodes/InvoicingAssets/trigger/polling/window';

const T0 = Date.UTC(2026, 10, 23, 12, 0, 0);
const DAY = 24 * 60 * 60_000;

function at(ms: number): string {
	return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
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

function asset(id: number, updatedAt: number, site = 'Berlin HQ') {
	return {
		kind: 'asset',
		record: {
			assetId: `AST-${id}`,
			updatedAt: at(updatedAt),
			status: 'active',
			site,
		} as unknown as Asset,
	} as PolledRecord;
}

function window(purpose: WindowPurpose, from: number, openedAt: number, to?: number): ListWindow {
	return {
		purpose,
		from,
		...(to === undefined ? {} : { to }),
		openedAt,
		readAt: openedAt,
		uncertainty: 0,
		nextPage: 1,
		total: null,
	};
}

/** The service's time at T0, known to within `uncertainty`, as a poll's clock tells it. */
const at0 = (uncertainty = 0) => ({ serviceNow: () => ({ now: T0, uncertainty }) });

/** A kind started at T0 whose baseline reads are done. */
function started(kind: 'invoice' | 'asset' = 'invoice') {
	const memory = KindMemory.startingAt(at0(), kind);
	memory.baseline = [];
	return memory;
}

/** A record state read by a window whose latest page answered at `readAt`. */
function accept(memory: KindMemory, polled: PolledRecord, read: ListWindow, readAt: number) {
	return memory.states.accept(polled, { ...read, readAt });
}

const ids = (events: Array<{ eventId: string }>) => events.map((event) => event.eventId);

describe('the Polling Trigger’s positions', () => {
	test('a follow window moves the cursor to the second the service was in; only a snapshot from the settled position settles', () => {
		const memory = started();
		expect(memory.settled).toBe(T0 - LISTED_WITHIN_MS);
		memory.completed(window('follow', memory.cursor, T0 + 60_500));
		expect(memory.cursor).toBe(T0 + 60_000);
		expect(memory.settled).toBe(T0 - LISTED_WITHIN_MS);
		memory.completed(window('follow', memory.settled, T0 + 120_500), true);
		expect(memory.cursor).toBe(T0 + 120_000);
		expect(memory.settled).toBe(T0 + 120_000 - LISTED_WITHIN_MS);
	});

	test('a settle window settles up to its end, reading its last second again unless it holds a page, and forgets what lies before', () => {
		const memory = started('asset');
		const opened = T0 + 10 * 60_000;
		const follow = window('follow', memory.cursor, opened);
		for (let id = 0; id < 150; id++) accept(memory, asset(id, T0 + 60_000), follow, opened);
		accept(memory, asset(999, T0 + 30_000), follow, opened);
		memory.completed(follow);
		expect(memory.states.count()).toBe(151);
		memory.completed(window('settle', memory.settled, opened, T0 + 30_000));
		expect(memory.settled).toBe(T0 + 30_000);
		expect(memory.states.count()).toBe(151);
		memory.completed(window('settle', memory.settled, opened, T0 + 60_000));
		// A second of 150 changes (more than a page) is not read again.
		expect(memory.settled).toBe(T0 + 61_000);
		expect(memory.states.count()).toBe(0);
	});

	test('a change is its state: read again it is none, two states within one second are two, a state stamped before the last one is one, an older state listed again is none', () => {
		const memory = started('asset');
		const follow = window('follow', memory.settled, T0 + 5000);
		expect(ids(accept(memory, asset(1, T0 + 2000), follow, T0 + 5000))).toHaveLength(1);
		expect(accept(memory, asset(1, T0 + 2000), follow, T0 + 5000)).toEqual([]);
		expect(accept(memory, asset(1, T0 + 2000, 'Munich DC-2'), follow, T0 + 5000)).toHaveLength(1);
		expect(accept(memory, asset(1, T0 + 1000, 'Hamburg'), follow, T0 + 5000)).toHaveLength(1);
		expect(accept(memory, asset(1, T0 + 2000), follow, T0 + 5000)).toEqual([]);
	});

	test('a state stamped beyond the listing bound ahead is the same state once the service’s time reaches it; one no window can list again is forgotten a day after it was last listed', () => {
		const memory = started('asset');
		const ahead = T0 + 20 * 60_000;
		expect(accept(memory, asset(1, ahead), window('follow', T0, T0), T0)).toHaveLength(1);
		expect(accept(memory, asset(1, ahead), window('follow', T0, ahead), ahead)).toEqual([]);
		const years = Date.UTC(2099, 0, 1);
		expect(accept(memory, asset(2, years), window('follow', T0, T0), T0)).toHaveLength(1);
		memory.completed(window('follow', T0, T0 + DAY / 2));
		expect(accept(memory, asset(2, years), window('follow', T0, T0 + DAY), T0 + DAY)).toEqual([]);
		memory.completed(window('follow', T0, T0 + 4 * DAY));
		expect(JSON.stringify(memory.toJSON().seen)).not.toContain('AST-2 ');
	});
});

describe('the Polling Trigger’s start', () => {
	test('without the service’s clock, the start is as early as the two clocks may differ: a change stamped up to 5 minutes before n8n’s time is reported', () => {
		const memory = KindMemory.startingAt(at0(LISTED_WITHIN_MS), 'invoice');
		memory.baseline = [];
		const follow = {
			...window('follow', memory.cursor, T0 + 60_000),
			uncertainty: LISTED_WITHIN_MS,
		};
		const paid = invoice(1, T0 - DAY, T0 - 4 * 60_000, 'paid');
		expect(ids(accept(memory, paid, follow, T0 + 60_000))).toEqual([
			'invoice.issued:INV-1',
			'invoice.paid:INV-1',
		]);
	});
});

describe('the Polling Trigger’s memory of issues and final states', () => {
	test(`issued on first sighting within ${ISSUED_WITHIN_MS / DAY} days of its issueDate, once; never when listed before the start`, () => {
		const memory = KindMemory.startingAt(at0(), 'invoice');
		const baseline = window('issued', T0 - 4 * DAY, T0, T0);
		expect(accept(memory, invoice(1, T0 - DAY), baseline, T0)).toEqual([]);
		// Stamped within the listing bound before the start: maybe listed only after it.
		expect(accept(memory, invoice(4, T0 - DAY, T0 - 60_000), baseline, T0)).toEqual([]);
		memory.baseline = [];
		const follow = window('follow', memory.cursor, T0 + DAY);
		expect(ids(accept(memory, invoice(1, T0 - DAY, T0 + 1000, 'paid'), follow, T0 + DAY))).toEqual([
			'invoice.paid:INV-1',
		]);
		expect(ids(accept(memory, invoice(2, T0 - 2 * DAY, T0 + 1000), follow, T0 + DAY))).toEqual([
			'invoice.issued:INV-2',
		]);
		// Its later change is never an issue again; overdue, it is an Invoice Overdue once.
		const overdue = invoice(2, T0 - 2 * DAY, T0 + 2000, 'overdue');
		expect(ids(accept(memory, overdue, follow, T0 + DAY))).toEqual(['invoice.overdue:INV-2']);
		expect(accept(memory, invoice(3, T0 - 3 * DAY, T0 + 1000), follow, T0 + DAY)).toEqual([]);
		const settle = window('settle', memory.settled, T0 + DAY, T0);
		expect(
			ids(accept(memory, invoice(4, T0 - DAY, T0 - 60_000, 'paid'), settle, T0 + DAY)),
		).toEqual(['invoice.issued:INV-4']);
	});

	test('an invoice read overdue is reported once as overdue, paid later as paid; issued and overdue between two polls gives both', () => {
		const memory = started();
		const follow = window('follow', memory.cursor, T0 + DAY);
		const read = (status: string, updatedAt: number, number = 1) =>
			ids(accept(memory, invoice(number, T0, updatedAt, status), follow, T0 + DAY));
		expect(read('issued', T0 + 1000)).toEqual(['invoice.issued:INV-1']);
		expect(read('overdue', T0 + 2000)).toEqual(['invoice.overdue:INV-1']);
		// Edited while overdue: the same status is not reported again.
		expect(read('overdue', T0 + 3000)).toEqual([]);
		expect(read('paid', T0 + 4000)).toEqual(['invoice.paid:INV-1']);
		expect(read('overdue', T0 + 1000, 2)).toEqual([
			'invoice.issued:INV-2',
			'invoice.overdue:INV-2',
		]);
	});

	test(`statuses are remembered ${STATUS_REMEMBERED_MS / DAY} days, exactly; issues until they could no longer be reported`, () => {
		const memory = started();
		const follow = window('follow', memory.cursor, T0);
		accept(memory, invoice(1, T0, T0 + 1000, 'paid'), follow, T0);
		const stored = () => JSON.stringify([memory.toJSON().issued, memory.toJSON().statuses]);
		const forgetAt = (now: number) => memory.completed(window('follow', memory.cursor, now));
		expect(stored()).toContain('"INV-1"');
		forgetAt(T0 + ISSUED_WITHIN_MS + 2 * DAY);
		expect(stored()).not.toContain('"INV-1"');
		forgetAt(T0 + STATUS_REMEMBERED_MS - DAY);
		expect(stored()).toContain('paid INV-1');
		forgetAt(T0 + STATUS_REMEMBERED_MS + 2 * DAY);
		expect(stored()).not.toContain('paid INV-1');
	});

	test.each([1000, 10_000])(
		'static data after 30 days of %i invoices a day, each issued and paid',
		(perDay) => {
			const memory = started();
			let number = 1_000_000;
			let reported = 0;
			for (let day = 0; day < 30; day++) {
				const now = T0 + day * DAY;
				memory.completed(window('follow', memory.cursor, now));
				memory.states.serviceTime = now;
				for (let change = 0; change < perDay; change++) {
					number += 1;
					if (memory.states.reportIssue(`INV-${number}`, { issuedAt: now, latest: now })) {
						reported += 1;
					}
					if (memory.states.reportStatus('paid', `INV-${number}`)) reported += 1;
				}
			}
			expect(reported).toBe(2 * 30 * perDay);
			const bytes = JSON.stringify(memory.toJSON()).length;
			// eslint-disable-next-line no-console -- the figure docs/choosing-a-trigger.md gives
			console.log(
				`static data after 30 days of ${perDay} invoices a day: ${Math.round(bytes / 1024)} kB`,
			);
			if (perDay === 1000) expect(bytes).toBeLessThan(1024 * 1024);
			expect(readStoredKind(JSON.parse(JSON.stringify(memory.toJSON())))).toEqual(memory.toJSON());
		},
	);
});

describe('service times and digests', () => {
	test.each([
		['2026-11-23T12:00:00Z', T0],
		['2026-11-23T12:00:00.250Z', T0 + 250],
		['2026-11-23T14:00:00+02:00', T0],
		['2026-11-23T07:30:00-0430', T0],
		['2026-11-23 12:00:00', T0],
		['2026-11-23', Date.UTC(2026, 10, 23)],
	])('%s is read', (text, expected) => {
		expect(readServiceTime(text)).toBe(expected);
	});

	test.each(['2026-02-30T00:00:00Z', '2026-11-23T24:00:00Z', 'noon', '', 1700000000])(
		'%p is no time',
		(value) => {
			expect(readServiceTime(value)).toBeUndefined();
		},
	);

	test('a digest is the same for the same state, whatever the order of its fields, and differs otherwise', () => {
		expect(digestOf({ a: 1, b: [1, { c: 2, d: null }] })).toBe(
			digestOf({ b: [1, { d: null, c: 2 }], a: 1 }),
		);
		expect(digestOf({ a: 1 })).not.toBe(digestOf({ a: 2 }));
		expect(digestOf({ a: 1 })).toMatch(/^[0-9a-f]{8}$/);
	});
});
