/**
 * Reads what the service sends, by the shapes of contract.ts: its answers (token, pages,
 * created subscription, subscription list, errors, Retry-After) and the bodies of its webhook
 * deliveries. Each reader is tolerant where the contract says so, and answers undefined (never a
 * guess) for what it cannot read.
 */
import {
	FIRST_PAGE,
	LIST_RECORD_KEYS,
	SUBSCRIPTION_ID_PATTERN,
	type IdentityError,
	type Invoice,
	type Page,
	type ServiceError,
	type ServiceEvent,
	type Subscription,
	type SubscriptionList,
} from './contract';

/* ------------------------------------------------------------------ identity service */

/** spec: the token is in `accessToken`. assumed: tolerate `access_token`. */
export function readAccessToken(body: unknown): string | undefined {
	const parsed = parseJsonIfText(body);
	if (!isObject(parsed)) return undefined;
	const token = parsed.accessToken ?? parsed.access_token;
	return typeof token === 'string' && token.length > 0 ? token : undefined;
}

export function readIdentityError(body: unknown): IdentityError | undefined {
	const parsed = parseJsonIfText(body);
	if (!isObject(parsed) || typeof parsed.error !== 'string') return undefined;
	return {
		error: parsed.error,
		error_description:
			typeof parsed.error_description === 'string' ? parsed.error_description : null,
	};
}

/* ------------------------------------------------------------------------ times */

/**
 * A timestamp read from the service as epoch milliseconds, or undefined when it is no time. spec:
 * `YYYY-MM-DDTHH:MM:SSZ`. Tolerated as well: a date alone (midnight UTC), fractions of a second,
 * a UTC offset (`+02:00`, `+0200`), a space for the `T`, and no zone at all (UTC, as the spec
 * says every time is). Not luxon, for speed: CONTRIBUTING.md, "Dates stay read by two readers".
 */
export function readServiceTime(value: unknown): number | undefined {
	if (typeof value !== 'string') return undefined;
	const match =
		/^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/i.exec(
			value.trim(),
		);
	if (!match) return undefined;
	const [, year, month, day, hour = '0', minute = '0', second = '0', fraction = '', zone = 'Z'] =
		match;
	const fields = [year, month, day, hour, minute, second].map(Number);
	const utc = Date.UTC(fields[0], fields[1] - 1, fields[2], fields[3], fields[4], fields[5]);
	const check = new Date(utc);
	if (
		check.getUTCMonth() !== fields[1] - 1 ||
		check.getUTCDate() !== fields[2] ||
		fields[3] > 23 ||
		fields[4] > 59 ||
		fields[5] > 59
	) {
		return undefined;
	}
	const offset =
		zone.toUpperCase() === 'Z'
			? 0
			: (zone.startsWith('-') ? -1 : 1) *
				(Number(zone.slice(1, 3)) * 60 + Number(zone.slice(-2))) *
				60_000;
	return utc + Math.floor(Number(`0${fraction}`) * 1000) - offset;
}

/* ------------------------------------------------------------------------ records */

/** A record (an invoice, an asset): a JSON object; undefined for any other answer. */
export function readRecord<T>(body: unknown): T | undefined {
	const parsed = parseJsonIfText(body);
	return isObject(parsed) ? (parsed as T) : undefined;
}

/** The assets an invoice bills: the lines' asset IDs, once each, without the lines that bill none. */
export function billedAssetIds(invoice: Invoice): string[] {
	const lines: unknown[] = Array.isArray(invoice.lines) ? invoice.lines : [];
	const ids = lines.map((line) => (isObject(line) ? line.assetId : undefined));
	return [...new Set(ids.filter((id): id is string => typeof id === 'string' && id !== ''))];
}

/** The identity of a list record: its key field, else the whole record. */
export function listRecordKey(path: string, record: unknown): string {
	const field = LIST_RECORD_KEYS[path];
	const value = field !== undefined && isObject(record) ? record[field] : undefined;
	return typeof value === 'string' && value !== '' ? value : JSON.stringify(record);
}

/** A page of the envelope; its `totalItems` is null unless a whole number. */
export function readPage<T>(body: unknown): Page<T> | undefined {
	const parsed = parseJsonIfText(body);
	if (!isObject(parsed) || !Array.isArray(parsed.items)) return undefined;
	const totalItems = isWholeNumber(parsed.totalItems) ? parsed.totalItems : null;
	return { ...(parsed as unknown as Page<T>), totalItems };
}

/* ------------------------------------------------------------------ subscriptions */

/**
 * spec: create answers 201 and its body is the GUID. assumed: as a JSON string, bare text or
 * `{ id }`. Anything that is not GUID-shaped is not taken as the ID (undefined).
 */
export function readCreatedSubscriptionId(body: unknown): string | undefined {
	if (typeof body === 'string') {
		const text = body.trim();
		if (text.startsWith('"') || text.startsWith('{')) {
			const parsed = parseJsonIfText(text);
			return parsed === text ? undefined : readCreatedSubscriptionId(parsed);
		}
		return isSubscriptionId(text) ? text : undefined;
	}
	if (isObject(body) && isSubscriptionId(body.id)) return body.id;
	return undefined;
}

/** spec: a subscription ID is a GUID. */
export function isSubscriptionId(value: unknown): value is string {
	return typeof value === 'string' && new RegExp(`^${SUBSCRIPTION_ID_PATTERN}$`).test(value);
}

/**
 * The answer to `page` of the subscription list, by the rule of SubscriptionList: a bare array
 * (page 1 only) as one page that holds the whole list, or a page of the envelope. undefined for
 * anything else, or when an entry has no string `id`: an unreadable list is never an empty one.
 */
export function readSubscriptionListPage(
	body: unknown,
	page: number,
): Page<Subscription> | undefined {
	const parsed = parseJsonIfText(body);
	if (Array.isArray(parsed) && page !== FIRST_PAGE) return undefined;
	const list: SubscriptionList | undefined = Array.isArray(parsed)
		? (parsed as Subscription[])
		: readPage<Subscription>(parsed);
	if (list === undefined) return undefined;
	const entries: unknown[] = Array.isArray(list) ? list : list.items;
	if (!entries.every((entry) => isObject(entry) && isNonEmptyString(entry.id))) return undefined;
	if (!Array.isArray(list)) return list;
	return { items: list, page, pageSize: list.length, totalItems: list.length };
}

/* ------------------------------------------------------------------------- events */

/**
 * An event needs a non-empty eventId and eventType; occurredAt, subscriptionId and data may be
 * null or absent, and are otherwise of their contract type.
 */
export function isServiceEvent(body: unknown): body is ServiceEvent {
	const empty = (value: unknown) => value === null || value === undefined;
	return (
		isObject(body) &&
		isNonEmptyString(body.eventId) &&
		isNonEmptyString(body.eventType) &&
		(empty(body.occurredAt) || typeof body.occurredAt === 'string') &&
		(empty(body.subscriptionId) || typeof body.subscriptionId === 'string') &&
		(empty(body.data) || isObject(body.data))
	);
}

/* ------------------------------------------------------------------------- errors */

export function readServiceError(body: unknown): ServiceError {
	const parsed = parseJsonIfText(body);
	if (!isObject(parsed)) return { code: null, message: null };
	const text = (value: unknown) => (typeof value === 'string' && value.length > 0 ? value : null);
	return {
		code: text(parsed.code) ?? text(parsed.error) ?? text(parsed.title),
		message: text(parsed.message) ?? text(parsed.error_description) ?? text(parsed.detail),
	};
}

/** A response header (`name` in lower case) whatever its case; undefined when absent or blank. */
export function readHeader(
	headers: Record<string, unknown> | undefined,
	name: string,
): string | undefined {
	const key = Object.keys(headers ?? {}).find((entry) => entry.toLowerCase() === name);
	const value: unknown = key === undefined ? undefined : headers?.[key];
	return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** An HTTP date (e.g. the Date header) as epoch ms; undefined when absent or unreadable. */
export function readHttpDate(header: string | undefined): number | undefined {
	if (header === undefined || !/[a-z]/i.test(header)) return undefined;
	const time = Date.parse(header);
	return Number.isFinite(time) ? time : undefined;
}

/** `Retry-After` in seconds or as an HTTP date; undefined when absent or unreadable. */
export function readRetryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
	if (value === undefined) return undefined;
	if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
	const date = Date.parse(value);
	return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/* ------------------------------------------------------------------------ helpers */

function isNonEmptyString(value: unknown): value is string {
	return typeof value === 'string' && value.length > 0;
}

function isWholeNumber(value: unknown): value is number {
	return Number.isInteger(value) && (value as number) >= 0;
}

function isObject(value: unknown): value is Record<string, unknown> {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseJsonIfText(body: unknown): unknown {
	if (typeof body !== 'string') return body;
	try {
		return JSON.parse(body);
	} catch {
		return body;
	}
}
