import { DateTime } from 'luxon';
import type { IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import {
	isGiven,
	readLimit,
	requireChoice,
	requireHttpsUrl,
	requireIdentifier,
	requireText,
	toServiceDate,
} from '../../../nodes/InvoicingAssets/actions/validation';
import { actionNode } from '../fixtures';

const node = actionNode;

function contextIn(timeZone: string): IExecuteFunctions {
	return { getNode: () => node, getTimezone: () => timeZone } as unknown as IExecuteFunctions;
}

const berlin = contextIn('Europe/Berlin');

function thrown(action: () => unknown): NodeOperationError {
	try {
		action();
	} catch (error) {
		return error as NodeOperationError;
	}
	throw new Error('Expected an error');
}

describe('toServiceDate', () => {
	test.each([
		['2026-03-31', 'Europe/Berlin', '2026-03-30T22:00:00Z'],
		['2026-01-15', 'Europe/Berlin', '2026-01-14T23:00:00Z'],
		['2026-01-15T08:30', 'America/New_York', '2026-01-15T13:30:00Z'],
		['2026-07-15 08:30:45', 'America/New_York', '2026-07-15T12:30:45Z'],
		['2026-07-15T08:30:45.999', 'Asia/Kolkata', '2026-07-15T03:00:45Z'],
		['2026-07-15', 'UTC', '2026-07-15T00:00:00Z'],
		['2026-03-31T14:30:00+02:00', 'America/New_York', '2026-03-31T12:30:00Z'],
		['2026-03-31T14:30:00Z', 'Asia/Tokyo', '2026-03-31T14:30:00Z'],
		['2026-03-31T14:30:00.5-0330', 'UTC', '2026-03-31T18:00:00Z'],
		[' 2026-03-31T14:30Z ', 'UTC', '2026-03-31T14:30:00Z'],
	])('%s in %s is %s', (value, zone, expected) => {
		expect(toServiceDate(contextIn(zone), 0, value, 'Issued After')).toBe(expected);
	});

	test('wall times agree with Luxon, as n8n’s own date fields read them', () => {
		for (const zone of [
			'Europe/Berlin',
			'America/Los_Angeles',
			'Australia/Sydney',
			'Asia/Kathmandu',
		]) {
			for (const text of ['2026-01-01T00:00:00', '2026-06-30T23:59:59', '2026-11-02T12:00:00']) {
				const luxon = DateTime.fromISO(text, { zone })
					.toUTC()
					.toISO({ suppressMilliseconds: true });
				expect(toServiceDate(contextIn(zone), 0, text, 'Issued After')).toBe(luxon);
			}
		}
	});

	test('daylight saving: a wall time skipped in spring moves forward by the gap', () => {
		// 2026-03-29 02:00 in Berlin jumps to 03:00, so 02:30 does not exist; 03:30 CEST is 01:30Z.
		expect(toServiceDate(berlin, 0, '2026-03-29T02:30:00', 'Issued After')).toBe(
			'2026-03-29T01:30:00Z',
		);
		expect(toServiceDate(berlin, 0, '2026-03-29T01:59:59', 'Issued After')).toBe(
			'2026-03-29T00:59:59Z',
		);
		expect(toServiceDate(berlin, 0, '2026-03-29T03:00:00', 'Issued After')).toBe(
			'2026-03-29T01:00:00Z',
		);
	});

	test('daylight saving: a wall time that happens twice in autumn is read once, consistently', () => {
		// 2026-10-25 03:00 CEST falls back to 02:00 CET, so 02:30 is 00:30Z and again 01:30Z.
		const result = toServiceDate(berlin, 0, '2026-10-25T02:30:00', 'Issued Before');
		expect(['2026-10-25T00:30:00Z', '2026-10-25T01:30:00Z']).toContain(result);
		expect(toServiceDate(berlin, 0, '2026-10-25T01:30:00', 'Issued Before')).toBe(
			'2026-10-24T23:30:00Z',
		);
		expect(toServiceDate(berlin, 0, '2026-10-25T03:30:00', 'Issued Before')).toBe(
			'2026-10-25T02:30:00Z',
		);
	});

	test('Luxon DateTimes (what $now and DateTime give) and JS Dates keep their instant', () => {
		const dateTime = DateTime.fromISO('2026-03-31T14:30:00', { zone: 'Asia/Tokyo' });
		expect(toServiceDate(berlin, 0, dateTime, 'Issued After')).toBe('2026-03-31T05:30:00Z');
		expect(toServiceDate(berlin, 0, new Date('2026-03-31T05:30:00.250Z'), 'Issued After')).toBe(
			'2026-03-31T05:30:00Z',
		);
	});

	test('Unix timestamps (seconds or milliseconds, numbers or digits) and zoned dates from other nodes', () => {
		const instant = '2026-03-31T14:30:00Z';
		const milliseconds = Date.parse(instant);
		for (const value of [
			milliseconds / 1000,
			milliseconds,
			String(milliseconds / 1000),
			String(milliseconds),
		]) {
			expect(toServiceDate(berlin, 0, value, 'Issued After')).toBe(instant);
		}
		expect(toServiceDate(berlin, 0, 'Tue, 31 Mar 2026 14:30:00 GMT', 'Issued After')).toBe(instant);
		expect(toServiceDate(berlin, 0, 'Tue, 31 Mar 2026 16:30:00 +0200', 'Issued After')).toBe(
			instant,
		);
	});

	test.each([
		['yesterday'],
		['Tue, 31 Mar 2026 14:30:00'],
		[999_999_999],
		[Number.NaN],
		['2026-02-30'],
		['2026-02-30T10:00:00Z'],
		['2026-04-31T10:00:00+02:00'],
		['2026-13-01'],
		['2026-03-31T24:00:00'],
		['2026-03-31T10:60:00'],
		['2026-03-31T10:00:60Z'],
		['2026-03-31T10:00:00+25:00'],
		['0050-01-01'],
		['31/03/2026'],
		[''],
		[42],
		[new Date('x')],
		[null],
	])('%p is refused with the parameter’s name and the item', (value) => {
		const error = thrown(() => toServiceDate(berlin, 3, value, 'Issued After'));
		expect(error).toBeInstanceOf(NodeOperationError);
		expect(error.message).toBe('The Issued After is not a valid date [item 3]');
		expect(error.description).toContain('2026-03-31');
		expect(error.context.itemIndex).toBe(3);
	});
});

describe('text and identifiers', () => {
	test('requireText trims, accepts numbers, and refuses empty or blank values', () => {
		expect(requireText(berlin, 0, '  INV-1 ', 'Invoice Number', 'INV-2026-000123')).toBe('INV-1');
		expect(requireText(berlin, 0, 42, 'Invoice Number', 'INV-2026-000123')).toBe('42');
		for (const value of ['', '   \t', undefined, null]) {
			const error = thrown(() =>
				requireText(berlin, 1, value, 'Invoice Number', 'INV-2026-000123'),
			);
			expect(error.message).toBe('The Invoice Number is empty [item 1]');
			expect(error.description).toContain('INV-2026-000123');
		}
	});

	test('requireText says so when an expression gives a list or an object', () => {
		for (const [value, kind] of [
			[['INV-1'], 'a list'],
			[{ number: 'INV-1' }, 'an object'],
		] as const) {
			const error = thrown(() =>
				requireText(berlin, 2, value, 'Invoice Number', 'INV-2026-000123'),
			);
			expect(error.message).toBe(`The Invoice Number must be text, not ${kind} [item 2]`);
			expect(error.description).toContain('pick one field');
		}
	});

	test('requireIdentifier refuses "." and "..", which cannot be one path segment', () => {
		expect(requireIdentifier(berlin, 0, '../x', 'Invoice Number', 'INV-1')).toBe('../x');
		for (const value of ['.', ' .. ']) {
			const error = thrown(() => requireIdentifier(berlin, 2, value, 'Invoice Number', 'INV-1'));
			expect(error.message).toBe(`The Invoice Number "${value.trim()}" is not valid [item 2]`);
		}
	});

	test.each([
		['a line break', 'INV\n1', 'U+000A (a line break) at character 4 of "INV\\u000A1"'],
		['a tab', 'INV-\t2', 'U+0009 (a tab) at character 5 of "INV-\\u00092"'],
		['NUL', 'AST\u00001', 'U+0000 at character 4 of "AST\\u00001"'],
		['DEL', 'AST-1\u007f', 'U+007F at character 6 of "AST-1\\u007F"'],
		['a C1 control (NEL)', 'INV-1\u0085', 'U+0085 at character 6 of "INV-1\\u0085"'],
		['the last C1 control', '\u009fINV', 'U+009F at character 1 of "\\u009FINV"'],
	])('requireIdentifier refuses %s inside the value, naming it', (_name, value, where) => {
		const error = thrown(() => requireIdentifier(berlin, 3, value, 'Invoice Number', 'INV-1'));
		expect(error).toBeInstanceOf(NodeOperationError);
		expect(error.message).toBe('The Invoice Number contains a control character [item 3]');
		expect(error.description).toContain(where);
		expect(error.description).toContain('broken expression');
	});

	test('requireIdentifier keeps what is no control character, and trims line breaks at the ends', () => {
		for (const value of ['INV-1', 'é e\u0301 ß', 'x\u00a0y', 'a\u2028b', '😀/%2F?#']) {
			expect(requireIdentifier(berlin, 0, value, 'Invoice Number', 'INV-1')).toBe(value);
		}
		expect(requireIdentifier(berlin, 0, '\tINV-1\r\n', 'Invoice Number', 'INV-1')).toBe('INV-1');
	});

	test('requireHttpsUrl refuses http with the TLS 1.2 requirement, and non-URLs', () => {
		expect(requireHttpsUrl(berlin, 0, 'https://n8n.example.com/x', 'Notification URL')).toBe(
			'https://n8n.example.com/x',
		);
		const http = thrown(() =>
			requireHttpsUrl(berlin, 0, 'http://n8n.example.com/x', 'Notification URL'),
		);
		expect(http.message).toBe('The Notification URL must start with https:// [item 0]');
		expect(http.description).toContain('TLS 1.2');
		const garbage = thrown(() => requireHttpsUrl(berlin, 4, 'n8n.example.com', 'Notification URL'));
		expect(garbage.message).toBe('The Notification URL is not a valid URL [item 4]');
	});

	test('readLimit takes whole numbers of at least 1, also as text', () => {
		const limitOf = (limit: unknown) =>
			readLimit(
				{
					...berlin,
					getNodeParameter: (name: string) => (name === 'limit' ? limit : false),
				} as unknown as IExecuteFunctions,
				1,
			);
		expect(limitOf(5)).toBe(5);
		expect(limitOf('150')).toBe(150);
		for (const value of [0, -1, 1.5, 'ten', '', undefined, Number.NaN]) {
			expect(thrown(() => limitOf(value)).message).toBe(
				'The Limit must be a whole number of at least 1 [item 1]',
			);
		}
	});

	test('requireChoice accepts known values in any case and names the parameter otherwise', () => {
		expect(requireChoice(berlin, 0, ' Paid ', ['issued', 'paid'] as const, 'Status')).toBe('paid');
		const error = thrown(() =>
			requireChoice(berlin, 0, 'open', ['issued', 'paid'] as const, 'Status'),
		);
		expect(error.message).toBe('The Status "open" is not one of the known values [item 0]');
		expect(error.description).toBe('Choose one of: issued, paid.');
	});

	test('isGiven', () => {
		expect([undefined, null, '', '  '].map(isGiven)).toEqual([false, false, false, false]);
		expect([0, 'x', false].map(isGiven)).toEqual([true, true, true]);
	});
});
