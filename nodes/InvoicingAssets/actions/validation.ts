import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError, tryToParseDateTime } from 'n8n-workflow';

import { DEFAULT_CONCURRENCY, MAX_CONCURRENCY, type DateRangeLabel } from './common.descriptions';
import { isHttpsAddress, fitsOnePathSegment, toServiceTimestamp } from '../transport/contract';

/** A NodeOperationError that names the item, for a parameter value the user must fix. */
export function invalidInput(
	context: IExecuteFunctions,
	itemIndex: number,
	message: string,
	description: string,
): NodeOperationError {
	return new NodeOperationError(context.getNode(), `${message} [item ${itemIndex}]`, {
		description,
		itemIndex,
	});
}

/** A text parameter that must not be empty or blank; returns it trimmed. */
export function requireText(
	context: IExecuteFunctions,
	itemIndex: number,
	value: unknown,
	displayName: string,
	example: string,
): string {
	if (typeof value === 'object' && value !== null) {
		throw invalidInput(
			context,
			itemIndex,
			`The ${displayName} must be text, not ${Array.isArray(value) ? 'a list' : 'an object'}`,
			`Enter one value, e.g. ${example}. If it comes from an expression, make it pick one field, e.g. {{ $json.items[0].number }} rather than {{ $json.items }}.`,
		);
	}
	const text =
		typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
	if (text === '') {
		throw invalidInput(
			context,
			itemIndex,
			`The ${displayName} is empty`,
			`Enter a value for "${displayName}", e.g. ${example}. If it comes from an expression, check that the field it reads exists in the input item.`,
		);
	}
	return text;
}

/** Half of a character: a UTF-16 surrogate without its other half. */
const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Text that goes into a URL must be whole characters: half of one (left over when text holding
 * emoji was cut) cannot be percent-encoded, and URL encoders either throw or silently change it.
 */
export function requireWholeCharacters(
	context: IExecuteFunctions,
	itemIndex: number,
	text: string,
	displayName: string,
): string {
	if (UNPAIRED_SURROGATE.test(text)) {
		throw invalidInput(
			context,
			itemIndex,
			`The ${displayName} contains a broken character`,
			`It holds half of a character (an unpaired UTF-16 surrogate, often left when text with emoji was cut short), which cannot be sent to the service intact. Check the value, or the expression that produces it.`,
		);
	}
	return text;
}

/** A control character: C0 (U+0000 to U+001F), DEL (U+007F) or C1 (U+0080 to U+009F). */
const CONTROL_CHARACTER = /\p{Cc}/u;

const CONTROL_CHARACTER_NAMES: Readonly<Record<string, string>> = {
	'\n': 'a line break',
	'\r': 'a carriage return',
	'\t': 'a tab',
};

/** U+000A for a line break: how a character is named in a message. */
function codePointOf(character: string): string {
	return `U+${(character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * No identifier holds a control character: in a value from an expression it means a broken
 * expression, so it is refused rather than sent percent-encoded (docs/troubleshooting.md).
 */
function requireNoControlCharacters(
	context: IExecuteFunctions,
	itemIndex: number,
	text: string,
	displayName: string,
): string {
	const characters = Array.from(text);
	const at = characters.findIndex((character) => CONTROL_CHARACTER.test(character));
	if (at < 0) return text;
	const control = characters[at];
	const name = CONTROL_CHARACTER_NAMES[control];
	// Up to 60 characters around it, each control character written as \uXXXX.
	const from = Math.max(0, at - 30);
	const excerpt = characters
		.slice(from, from + 60)
		.map((character) =>
			CONTROL_CHARACTER.test(character) ? `\\u${codePointOf(character).slice(2)}` : character,
		)
		.join('');
	const shown = `${from > 0 ? '…' : ''}${excerpt}${from + 60 < characters.length ? '…' : ''}`;
	throw invalidInput(
		context,
		itemIndex,
		`The ${displayName} contains a control character`,
		`It holds ${codePointOf(control)}${name ? ` (${name})` : ''} at character ${at + 1} of "${shown}", and no ${displayName} has one. In a value from an expression this usually means a broken expression, e.g. one that joins several fields or lines, or reads the wrong field: check the expression, or remove the character.`,
	);
}

/** An optional text filter: trimmed when given, undefined when unset or blank. */
export function optionalText(
	context: IExecuteFunctions,
	itemIndex: number,
	value: unknown,
	displayName: string,
): string | undefined {
	if (!isGiven(value)) return undefined;
	return requireWholeCharacters(context, itemIndex, String(value).trim(), displayName);
}

/** The identifier of one record (trimmed, not empty, no control character), sent as one URL path segment. */
export function requireIdentifier(
	context: IExecuteFunctions,
	itemIndex: number,
	value: unknown,
	displayName: string,
	example: string,
): string {
	const text = requireNoControlCharacters(
		context,
		itemIndex,
		requireWholeCharacters(
			context,
			itemIndex,
			requireText(context, itemIndex, value, displayName, example),
			displayName,
		),
		displayName,
	);
	if (!fitsOnePathSegment(text)) {
		throw invalidInput(
			context,
			itemIndex,
			`The ${displayName} "${text}" is not valid`,
			`Enter a value such as ${example}. If it comes from an expression, check that the field it reads holds the ${displayName}.`,
		);
	}
	return text;
}

/** Whether an optional parameter holds a value (not unset, null or blank). */
export function isGiven(value: unknown): boolean {
	return value !== undefined && value !== null && String(value).trim() !== '';
}

/** An options parameter whose value (possibly from an expression) must be one of `choices`. */
export function requireChoice<T extends string>(
	context: IExecuteFunctions,
	itemIndex: number,
	value: unknown,
	choices: readonly T[],
	displayName: string,
): T {
	const text = String(value).trim().toLowerCase();
	const choice = choices.find((entry) => entry === text);
	if (choice === undefined) {
		throw invalidInput(
			context,
			itemIndex,
			`The ${displayName} "${String(value).slice(0, 40)}" is not one of the known values`,
			`Choose one of: ${choices.join(', ')}.`,
		);
	}
	return choice;
}

/** A whole number given as a number or as its digits (an expression may give either), else undefined. */
function wholeNumber(value: unknown): number | undefined {
	const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
	return typeof number === 'number' && Number.isInteger(number) ? number : undefined;
}

/** The Concurrency option, read once from the first item: a whole number from 1 to MAX_CONCURRENCY. */
export function readConcurrency(context: IExecuteFunctions): number {
	const value = context.getNodeParameter('options.concurrency', 0, DEFAULT_CONCURRENCY);
	const concurrency = wholeNumber(value);
	if (concurrency === undefined || concurrency < 1 || concurrency > MAX_CONCURRENCY) {
		throw invalidInput(
			context,
			0,
			`The Concurrency must be a whole number from 1 to ${MAX_CONCURRENCY}`,
			`Set Options → Concurrency to how many items to send at the same time, e.g. ${DEFAULT_CONCURRENCY}, or remove the option. If it comes from an expression, check that it gives a number. Got: ${JSON.stringify(String(value)).slice(0, 40)}.`,
		);
	}
	return concurrency;
}

/** Return All and Limit: undefined for all records, else the Limit, a whole number of at least 1. */
export function readLimit(context: IExecuteFunctions, itemIndex: number): number | undefined {
	if (context.getNodeParameter('returnAll', itemIndex, false) === true) return undefined;
	const value = context.getNodeParameter('limit', itemIndex, 50);
	const limit = wholeNumber(value);
	if (limit === undefined || limit < 1) {
		throw invalidInput(
			context,
			itemIndex,
			'The Limit must be a whole number of at least 1',
			`Enter how many records to return at most, e.g. 50, or turn on Return All. Got: ${JSON.stringify(String(value)).slice(0, 40)}.`,
		);
	}
	return limit;
}

/** A URL parameter that must be absolute and https (normalised), because the service delivers only over TLS 1.2+. */
export function requireHttpsUrl(
	context: IExecuteFunctions,
	itemIndex: number,
	value: unknown,
	displayName: string,
): string {
	const text = requireText(
		context,
		itemIndex,
		value,
		displayName,
		'https://n8n.example.com/webhook/invoices',
	);
	if (!URL.canParse(text)) {
		throw invalidInput(
			context,
			itemIndex,
			`The ${displayName} is not a valid URL`,
			`Enter a full address starting with https://, e.g. https://n8n.example.com/webhook/invoices.`,
		);
	}
	if (!isHttpsAddress(text)) {
		throw invalidInput(
			context,
			itemIndex,
			`The ${displayName} must start with https://`,
			'The service delivers events only over HTTPS secured with TLS 1.2 or later; plain http addresses are refused. Use the https address of your receiver (for n8n, set N8N_WEBHOOK_URL to its public https address or put it behind a TLS proxy).',
		);
	}
	return new URL(text).toString();
}

/**
 * Any date the user may give as the service's UTC timestamp: ISO text (with or without time or
 * zone), a Luxon DateTime, a Date, a Unix timestamp in seconds or milliseconds, or text with an
 * explicit zone such as an HTTP or RFC 2822 date.
 */
export function toServiceDate(
	context: IExecuteFunctions,
	itemIndex: number,
	value: unknown,
	displayName: string,
): string {
	const date = parseUserDate(value, context.getTimezone());
	if (!date) {
		throw invalidInput(
			context,
			itemIndex,
			`The ${displayName} is not a valid date`,
			`Use a date such as 2026-03-31, 2026-03-31T14:30:00 or 2026-03-31T14:30:00Z, a Unix timestamp such as 1774967400, or an expression such as {{ $now.minus({ days: 7 }) }}. Got: ${JSON.stringify(String(value)).slice(0, 80)}.`,
		);
	}
	return toServiceTimestamp(date);
}

/** Text of the ISO 8601 shape (a space may stand for the T), whatever its numbers. */
const ISO_SHAPE =
	/^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;
/**
 * The same with hours, minutes, seconds and zone offset in range. n8n's reader takes an offset of
 * +25:00, and for a day the calendar does not have falls back to Date.parse, which moves 30
 * February into March: the day read must be the day written.
 */
const ISO_DATE_TIME =
	/^(\d{4}-\d{2}-\d{2})(?:[T ](?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d+)?)?(?:Z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)?)?$/i;

/** Unix timestamps from 2001-09-09 on: below 1e11 they are seconds, above, milliseconds. */
const EARLIEST_UNIX_SECONDS = 1e9;
const MILLISECONDS_FROM = 1e11;
const UNIX_TIMESTAMP = /^\d{10,16}$/;
/** Other text must name its zone (GMT, UTC, Z or an offset), so that nothing guesses it. */
const EXPLICIT_ZONE = /(?:\b(?:GMT|UTC)\b|\dZ$|[+-]\d{2}:?\d{2}$)/i;
/** Earlier years are typing mistakes (e.g. 0026 for 2026), not dates of invoices or assets. */
const EARLIEST_YEAR = 100;

function fromUnixTimestamp(value: number): Date | undefined {
	if (!Number.isFinite(value) || value < EARLIEST_UNIX_SECONDS) return undefined;
	const date = new Date(value < MILLISECONDS_FROM ? value * 1000 : value);
	return Number.isNaN(date.getTime()) ? undefined : date;
}

/**
 * A date read as n8n's own date fields read it (n8n-workflow's tryToParseDateTime, the same in
 * n8n 1.x): a zone-less date or time is wall time in the workflow's time zone.
 */
function parseUserDate(value: unknown, timeZone: string): Date | undefined {
	if (typeof value === 'number') return fromUnixTimestamp(value);
	let isoDay: string | undefined;
	if (typeof value === 'string') {
		const text = value.trim();
		if (UNIX_TIMESTAMP.test(text)) return fromUnixTimestamp(Number(text));
		if (ISO_SHAPE.test(text)) {
			isoDay = ISO_DATE_TIME.exec(text)?.[1];
			if (isoDay === undefined) return undefined;
		} else if (!EXPLICIT_ZONE.test(text)) {
			return undefined;
		}
	} else if (typeof value !== 'object' || value === null) {
		return undefined;
	}
	let parsed: ReturnType<typeof tryToParseDateTime>;
	try {
		parsed = tryToParseDateTime(value, timeZone);
	} catch {
		return undefined;
	}
	if (!parsed.isValid || parsed.year < EARLIEST_YEAR) return undefined;
	if (isoDay !== undefined && parsed.toFormat('yyyy-MM-dd') !== isoDay) return undefined;
	return parsed.toJSDate();
}

/**
 * The filters of dateRangeFilters (e.g. Issued After / Issued Before) as the list's query
 * (`issuedFrom` / `issuedTo`), service timestamps; a range that no record can match is refused.
 */
export function readDateRange(
	context: IExecuteFunctions,
	itemIndex: number,
	given: IDataObject,
	label: DateRangeLabel,
	records: string,
): IDataObject {
	const name = label.toLowerCase();
	const read = (side: 'After' | 'Before') => {
		const value = given[`${name}${side}`];
		return isGiven(value)
			? toServiceDate(context, itemIndex, value, `${label} ${side}`)
			: undefined;
	};
	const [from, to] = [read('After'), read('Before')];
	if (from && to && from > to) {
		throw invalidInput(
			context,
			itemIndex,
			`The ${label} After date is later than the ${label} Before date`,
			`No ${records} can match: ${from} is after ${to}. Swap the two dates, or remove one of them.`,
		);
	}
	return { ...(from ? { [`${name}From`]: from } : {}), ...(to ? { [`${name}To`]: to } : {}) };
}
