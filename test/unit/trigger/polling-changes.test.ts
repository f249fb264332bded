import type { Asset, Invoice } from '../../../nodes/InvoicingAssets/transport/contract';
import { readServiceTime } from '../../../nodes/InvoicingAssets/transport/responses';
import {
	baselineState,
	ChangeMemory,
	digestOf,
	MAX_FINAL_STATES,
	MAX_ISSUED_INVOICES,
	MAX_RECENT_STATES,
	MAX_UNPLACED_RECORDS,
	OVERLAP_MS,
	POLLABLE_EVENT_TYPES,
	readKindState,
	UNKNOWN_CLOCK_TOLERANCE_MS,
	type KindState,
	type PolledRecord,
	type ReadWindow,
} from '../../../nodes/InvoicingAssets/trigger/polling/changes';

const ALL = new Set<string>(POLLABLE_EVENT_TYPES);
const T0 = Date.UTC(2026, 10, 23, 12, 0, 0);

function at(seconds: number): string {
	return new Date(T0 + seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function invoice(
	number: number,
	issuedAt: number | string,
	updatedAt: number | string = issuedAt,
	status = 'issued',
	extra: Record<string, unknown> = {},
): PolledRecord {
	return {
		kind: 'invoice',
		record: {
			invoiceNumber: `INV-${number}`,
			issueDate: typeof issuedAt === 'number' ? at(issuedAt) : issuedAt,
			updatedAt: typeof updatedAt === 'number' ? at(updatedAt) : updatedAt,
			status,
			...extra,
		} as unknown as Invoice,
	};
}

function asset(id: number, updatedAt: number | string, status = 'active', site = 'Berlin HQ') {
	return {
		kind: 'asset',
		record: {
			assetId: `AST-${id}`,
			updatedAt: typeof updatedAt === 'number' ? at(updatedAt) : updatedAt,
			status,
			site,
		} as unknown as Asset,
	} as PolledRecord;
}

/** A window from the settled position up to the service's time `now` (seconds after T0). */
function openWindow(memory: ChangeMemory, now: number, records: PolledRecord[]): ReadWindow {
	return {
		from: memory.settledAt,
		serviceNow: T0 + now * 1000,
		tolerance: OVERLAP_MS,
		records,
	};
}

/** A memory whose baseline is T0, and a poll at service time `now` over what the list gives. */
function trigger() {
	const memory = new ChangeMemory(baselineState(T0));
	return {
		memory,
		poll: (now: number, records: PolledRecord[], wanted = ALL) =>
			memory
				.take(
					openWindow(
						memory,
						now,
						records.filter(
							(polled) =>
								(readServiceTime(polled.record.updatedAt) ?? Infinity) >= memory.settledAt,
						),
					),
					wanted,
				)
				.map((event) => event.eventId),
	};
}

const overlap = OVERLAP_MS / 1000;

describe('the Polling Trigger’s change memory', () => {
	test('settles the time older than the overlap, by the service’s clock; the states within it are remembered', () => {
		const { memory, poll } = trigger();
		expect(poll(100, [invoice(1, 60)])).toEqual(['invoice.issued:INV-1']);
		expect(memory.settledAt).toBe(T0);
		expect(poll(1000, [invoice(1, 60), invoice(2, 900)])).toEqual(['invoice.issued:INV-2']);
		expect(memory.settledAt).toBe(T0 + (1000 - overlap) * 1000);
		expect(Object.keys(memory.state().recent)).toEqual(['INV-2']);
	});

	test('a window that ends before the service’s time settles up to its end', () => {
		const memory = new ChangeMemory(baselineState(T0));
		const to = T0 + 499_999;
		memory.take({ ...openWindow(memory, 10_000, [invoice(1, 100)]), to }, ALL);
		expect(memory.settledAt).toBe(T0 + 499_000);
	});

	test('two states of one record within one second are two changes; one state read twice is one', () => {
		const { poll } = trigger();
		expect(poll(10, [asset(1, 5, 'active', 'Berlin HQ')])).toHaveLength(1);
		expect(poll(10, [asset(1, 5, 'active', 'Berlin HQ')])).toEqual([]);
		const second = poll(10, [asset(1, 5, 'active', 'Zurich Lab')]);
		expect(second).toHaveLength(1);
		expect(second[0]).toMatch(new RegExp(`^asset\\.updated:AST-1:${at(5)}:[0-9a-f]{8}$`));
		const issued = poll(20, [invoice(7, 15)]);
		expect(poll(20, [invoice(7, 15, 15, 'paid')])).toEqual(['invoice.paid:INV-7']);
		expect(issued).toEqual(['invoice.issued:INV-7']);
	});

	test('issued once: listed long after its issue, issued and paid at once, edited after; never when issued before the start', () => {
		const { poll } = trigger();
		expect(poll(4000, [invoice(1, 60, 3900)])).toEqual(['invoice.issued:INV-1']);
		expect(poll(5000, [invoice(1, 60, 4900, 'issued', { dueDate: 'x' })])).toEqual([]);
		expect(poll(6000, [invoice(2, 5500, 5600, 'paid')])).toEqual([
			'invoice.issued:INV-2',
			'invoice.paid:INV-2',
		]);
		expect(poll(7000, [invoice(3, -60, 6900, 'paid')])).toEqual(['invoice.paid:INV-3']);
		expect(poll(8000, [invoice(4, -60, 7900)])).toEqual([]);
	});

	test('issueDate forms: a date alone means its whole day; offsets and fractions are read; unreadable counts as new', () => {
		const { poll } = trigger();
		const day = at(0).slice(0, 10);
		const dayBefore = at(-86_400).slice(0, 10);
		expect(
			poll(100, [
				invoice(1, day, 50),
				invoice(2, dayBefore, 50),
				invoice(3, `${at(10).slice(0, 19)}+00:00`, 50),
				invoice(4, `${at(-10).slice(0, 19)}.999Z`, 50),
				invoice(5, 'in a while', 50),
			]).sort(),
		).toEqual(['invoice.issued:INV-1', 'invoice.issued:INV-3', 'invoice.issued:INV-5']);
	});

	test('final states once: a paid invoice or a retired asset edited later is not reported in that state again', () => {
		const { poll } = trigger();
		expect(poll(10, [invoice(1, 5, 6, 'paid'), asset(1, 6, 'retired')]).sort()).toEqual([
			'asset.retired:AST-1',
			'invoice.issued:INV-1',
			'invoice.paid:INV-1',
		]);
		const later = poll(1000, [
			invoice(1, 5, 900, 'paid', { dueDate: 'later' }),
			asset(1, 900, 'retired', 'Zurich Lab'),
		]);
		expect(later).toEqual([expect.stringMatching(/^asset\.updated:AST-1:/)]);
	});

	test('a state older than the one remembered is a stale read; records outside the window are skipped', () => {
		const { memory, poll } = trigger();
		poll(100, [asset(1, 90, 'active', 'B')]);
		expect(poll(100, [asset(1, 80, 'active', 'A')])).toEqual([]);
		const window = openWindow(memory, 100, [asset(2, -10), asset(3, 50)]);
		expect(memory.take({ ...window, to: T0 + 40_999 }, ALL)).toEqual([]);
	});

	test('stamps it cannot use: reported once, never moving the position, the oldest forgotten beyond the bound', () => {
		const { memory, poll } = trigger();
		const ahead = asset(1, '2099-01-01T00:00:00Z');
		const odd = asset(2, 'noon');
		expect(poll(100, [ahead, odd])).toHaveLength(2);
		expect(poll(2000, [ahead, odd])).toEqual([]);
		expect(memory.settledAt).toBe(T0 + (2000 - overlap) * 1000);
		expect(memory.state().unplaced).toEqual(['AST-1', 'AST-2']);
		const many = Array.from({ length: MAX_UNPLACED_RECORDS + 10 }, (_, index) =>
			asset(100 + index, `bad ${index}`),
		);
		poll(3000, many);
		expect(memory.state().unplaced).toHaveLength(MAX_UNPLACED_RECORDS);
		expect(memory.state().unplaced[0]).toBe('AST-110');
	});

	test('without the service’s time, the position stays twice the overlap behind n8n’s clock', () => {
		const memory = new ChangeMemory(baselineState(T0));
		memory.take(
			{ from: T0, serviceNow: T0 + 3_600_000, tolerance: UNKNOWN_CLOCK_TOLERANCE_MS, records: [] },
			ALL,
		);
		expect(memory.settledAt).toBe(T0 + 3_600_000 - UNKNOWN_CLOCK_TOLERANCE_MS);
	});

	test(`remembers at most ${MAX_RECENT_STATES} states: the oldest seconds are settled early, never reported again`, () => {
		const { memory, poll } = trigger();
		const burst = Array.from({ length: MAX_RECENT_STATES + 500 }, (_, index) =>
			invoice(index, 100 + Math.floor(index / 100)),
		);
		expect(poll(200, burst)).toHaveLength(burst.length);
		const state = memory.state();
		expect(Object.keys(state.recent).length).toBeLessThanOrEqual(MAX_RECENT_STATES);
		// 100 changes a second: the five oldest seconds are settled early.
		expect(memory.settledAt).toBe(T0 + 105_000);
		expect(poll(200, burst)).toEqual([]);
	});

	test(`remembers at most ${MAX_ISSUED_INVOICES} issued invoices: those forgotten count as issued before`, () => {
		const { memory, poll } = trigger();
		const count = MAX_ISSUED_INVOICES + 20;
		for (let first = 0; first < count; first += 1000) {
			const batch = Array.from({ length: Math.min(1000, count - first) }, (_, index) =>
				invoice(first + index, 10 + first + index, 10 + first + index),
			);
			poll(10 + first + 1000 + overlap, batch);
		}
		const state = memory.state();
		expect(state.issued).toHaveLength(MAX_ISSUED_INVOICES);
		expect(state.issuedUntil).toBe(at(10 + 19));
		expect(poll(count + 5000, [invoice(5, 15, count + 4000, 'paid')])).toEqual([
			'invoice.paid:INV-5',
		]);
		expect(poll(count + 6000, [invoice(count + 1, count + 5500, count + 5500)])).toEqual([
			`invoice.issued:INV-${count + 1}`,
		]);
	});

	test(`remembers at most ${MAX_FINAL_STATES} final states per record kind, the oldest forgotten first`, () => {
		const { memory, poll } = trigger();
		const retired = Array.from({ length: MAX_FINAL_STATES + 5 }, (_, index) =>
			asset(index, 50, 'retired'),
		);
		poll(100, retired);
		const { final } = memory.state();
		expect(final).toHaveLength(MAX_FINAL_STATES);
		// Taken in the order of their stamp, then of their ID (as text): AST-0, AST-1, AST-10, …
		expect(final).not.toContain('retired AST-0');
		expect(final).toContain(`retired AST-${MAX_FINAL_STATES + 4}`);
	});

	test('a baseline remembers and reports nothing', () => {
		const memory = new ChangeMemory(baselineState(T0));
		expect(memory.take(openWindow(memory, 10, [invoice(1, 5)]), ALL, false)).toEqual([]);
		expect(memory.take(openWindow(memory, 10, [invoice(1, 5)]), ALL)).toEqual([]);
	});

	test('reads back what it stored, and nothing from a foreign shape', () => {
		const { memory, poll } = trigger();
		poll(100, [invoice(1, 10, 20, 'paid'), asset(1, 'odd')]);
		const stored: KindState = JSON.parse(JSON.stringify(memory.state()));
		expect(readKindState(stored)).toEqual(memory.state());
		expect(readKindState({ cursor: at(0), seen: {} })).toBeUndefined();
		expect(readKindState({ start: 'x', settled: at(0) })).toBeUndefined();
		expect(readKindState('x')).toBeUndefined();
	});
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
		expect(digestOf({ a: 1 })).toMatch(/^[0-9a-f]{16}$/);
	});
});
