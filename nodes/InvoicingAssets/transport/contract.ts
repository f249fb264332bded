/**
 * The service contract: every path, field name, shape and status this package relies on.
 *
 * The provider's specification fixes only part of it (marked "spec"). The rest is our
 * assumption (marked "assumed") and must be corrected here, and only here, once the
 * provider's real documentation says otherwise; responses.ts reads the service's answers by
 * these shapes, notificationUrl.ts builds and hides the delivery key by DELIVERY_KEY_PARAMETER.
 * docs/service-contract.openapi.yaml states the same contract as an OpenAPI document
 * (docs/service-contract.md is its guide); a unit test holds this module against it, and the
 * test simulator, written apart from this module, is validated against it too.
 */

/* ------------------------------------------------------------------ identity service */

/** spec: appended to the Identity Service URL. */
export const GRANT_PATH = '/B2C_1A_DP_ClientCredentialsFlow/oauth2/v2.0/token';

/** spec: the scope names the API resource and ends with this suffix. */
export const SCOPE_SUFFIX = '/.default';

/** spec: form-encoded client-credentials grant. */
export function tokenRequestForm(clientId: string, clientSecret: string, scope: string) {
	return {
		grant_type: 'client_credentials',
		scope,
		client_id: clientId,
		client_secret: clientSecret,
	};
}

/**
 * assumed: a token request changes nothing at the identity service, so asking twice is harmless:
 * it is retried like a read (faults, 429/503 with Retry-After, lost connections, timeouts).
 */
export const TOKEN_REQUEST_IS_HARMLESS_TO_REPEAT = true;

/** assumed: identity-service errors are OAuth style, `{ error, error_description }`. */
export interface IdentityError {
	error: string;
	error_description: string | null;
}

/** assumed: the OAuth error codes that mean "this client ID or secret is not accepted". */
export const REJECTED_CLIENT_ERRORS = ['invalid_client', 'unauthorized_client'];

/** assumed: the identity service says `key_expired` for a key past its expiry date. */
export const EXPIRED_KEY_ERROR = 'key_expired';

/** assumed: the identity service's answer to a scope it does not know. */
export const INVALID_SCOPE_ERROR = 'invalid_scope';

/* --------------------------------------------------------------------- service API */

/** spec: `Authorization: Bearer <accessToken>`; JSON is the only media type. */
export const JSON_MEDIA_TYPE = 'application/json';

/**
 * A value that becomes one path segment. URL parsers resolve a segment of "." or ".." (even
 * percent-encoded) against the path, so such values can never be sent as a record's identifier.
 */
export function fitsOnePathSegment(value: string): boolean {
	return value !== '.' && value !== '..';
}

export const paths = {
	/** spec (create); assumed (list) */
	subscriptions: '/subscription/v1/subscription',
	/** assumed */
	subscription: (id: string) => `/subscription/v1/subscription/${encodeURIComponent(id)}`,
	/** assumed */
	invoices: '/invoice/v1/invoices',
	/** assumed; spec names the path parameter `{invoiceNumber}` */
	invoice: (invoiceNumber: string) => `/invoice/v1/invoices/${encodeURIComponent(invoiceNumber)}`,
	/** assumed */
	assets: '/asset/v1/assets',
	/** assumed */
	asset: (assetId: string) => `/asset/v1/assets/${encodeURIComponent(assetId)}`,
};

/** spec: timestamps are UTC, `YYYY-MM-DDTHH:MM:SSZ`. */
export function toServiceTimestamp(date: Date): string {
	return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * assumed: list answers and the create call's answer carry the service's clock in the HTTP `Date`
 * header (RFC 9110 has every origin server with a clock send it); the same clock stamps
 * `updatedAt`, an event's `occurredAt` and a subscription's `createdAt`.
 */
export const SERVICE_TIME_HEADER = 'date';

/** assumed: a change is listed (found by `updatedFrom`) within this long of its `updatedAt`. */
export const CHANGE_LISTED_WITHIN_MS = 5 * 60_000;

/* ------------------------------------------------------------------------ records */

/** assumed */
export const INVOICE_STATUSES = ['issued', 'paid', 'overdue', 'cancelled'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

/** assumed */
export interface InvoiceLine {
	description: string | null;
	quantity: number;
	unitPrice: number;
	amount: number;
	assetId: string | null;
}

/** assumed; spec: the invoice is identified by `invoiceNumber`, and empty fields are `null` */
export interface Invoice {
	invoiceNumber: string;
	customerNumber: string;
	issueDate: string;
	dueDate: string | null;
	status: InvoiceStatus;
	currency: string;
	totalAmount: number;
	taxAmount: number | null;
	updatedAt: string;
	lines: InvoiceLine[];
}

/** assumed: an invoice number is letters and digits, with `-`, `_`, `.` or `/` between them (regex source, unanchored). */
export const INVOICE_NUMBER_PATTERN = '[A-Za-z0-9][A-Za-z0-9._/-]{0,63}';

/**
 * assumed: list filters of the invoices endpoint. `issuedFrom`/`issuedTo` bound `issueDate`,
 * `updatedFrom`/`updatedTo` bound `updatedAt`; both inclusive, as service timestamps.
 * `updatedAt` (invoices and assets) is the service's time of a record's last change, to the
 * second: it moves on with every change, but two changes within one second may carry the same
 * one. `issueDate` is the moment of issue, which may lie long before the invoice is first
 * listed. No list order is assumed.
 */
export interface InvoiceFilters {
	issuedFrom?: string;
	issuedTo?: string;
	updatedFrom?: string;
	updatedTo?: string;
	status?: InvoiceStatus;
	customerNumber?: string;
}

/** assumed */
export const ASSET_STATUSES = ['active', 'inactive', 'retired'] as const;
export type AssetStatus = (typeof ASSET_STATUSES)[number];

/** assumed */
export interface Asset {
	assetId: string;
	serialNumber: string | null;
	type: string;
	model: string | null;
	site: string | null;
	customerNumber: string;
	status: AssetStatus;
	contractEnd: string | null;
	updatedAt: string;
}

/** assumed: getting an asset that does not exist (any more) answers 404. */
export const RECORD_NOT_FOUND_STATUS = 404;

/** assumed: an asset ID is letters and digits, with `-`, `_` or `.` between them (regex source, unanchored). */
export const ASSET_ID_PATTERN = '[A-Za-z0-9][A-Za-z0-9._-]{0,63}';

/** assumed: list filters of the assets endpoint; `updatedFrom`/`updatedTo` bound `updatedAt` (inclusive). */
export interface AssetFilters {
	status?: AssetStatus;
	type?: string;
	site?: string;
	customerNumber?: string;
	serialNumber?: string;
	updatedFrom?: string;
	updatedTo?: string;
}

/* -------------------------------------------------------------------------- pages */

/**
 * assumed: list endpoints answer with this envelope; `page` starts at 1. `totalItems` is null
 * from a service that does not count (spec: empty fields are null). No order is assumed.
 */
export interface Page<T> {
	items: T[];
	page: number;
	pageSize: number;
	totalItems: number | null;
}

export const FIRST_PAGE = 1;
export const MAX_PAGE_SIZE = 100;
export const pageQuery = (page: number, pageSize: number) => ({ page, pageSize });

/**
 * assumed: the field that identifies a record of each list, so that a record a list gives again
 * (on another page) is recognised as the same record.
 */
export const LIST_RECORD_KEYS: Readonly<Record<string, string>> = {
	[paths.invoices]: 'invoiceNumber',
	[paths.assets]: 'assetId',
	[paths.subscriptions]: 'id',
};

/* ------------------------------------------------------------------ subscriptions */

/**
 * assumed except the first, which is the spec's example. `invoice.overdue`: an issued invoice's
 * status became `overdue` (a change: its `updatedAt` moves on).
 */
export const EVENT_TYPES = [
	'invoice.issued',
	'invoice.paid',
	'invoice.overdue',
	'invoice.cancelled',
	'asset.created',
	'asset.updated',
	'asset.retired',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** assumed: body of the create call; `eventTypes: null` means every event. */
export interface SubscriptionRequest {
	notificationUrl: string;
	eventTypes: string[] | null;
	description: string | null;
}

/** spec: a subscription is identified by a GUID (regex source, unanchored). */
export const SUBSCRIPTION_ID_PATTERN =
	'[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';

/** assumed: one entry of the list call */
export interface Subscription {
	id: string;
	notificationUrl: string;
	eventTypes: string[] | null;
	description: string | null;
	createdAt: string;
}

/**
 * assumed: the list call answers in either form; the answer to page 1 (asked for with `pageSize`)
 * decides which. A JSON array is every subscription, whatever its length: nothing more is asked
 * for. An object with an `items` array is page 1 of the envelope, read on like the other lists.
 * Anything else, or an array after page 1, is no list: an error, never an empty one.
 */
export type SubscriptionList = Subscription[] | Page<Subscription>;

/**
 * assumed: the delete call answers 404 with this code for a subscription the service does not
 * know (or that another API key owns). Any other 404, such as a gateway's answer to a path it
 * does not know, says nothing about the subscription.
 */
export const SUBSCRIPTION_NOT_FOUND_ERROR = 'subscription_not_found';

/**
 * assumed: the service retries a delivery that was not answered 2xx for at most this long after
 * the event occurred (the "day" the README's Expiry section waits before the old key is deleted).
 * A subscription of a replaced API key is let in for this long after its replacement, for the
 * retries of what it could not deliver meanwhile, and no longer: after that its key is refused.
 */
export const DELIVERY_RETRIES_END_WITHIN_MS = 24 * 60 * 60_000;

/**
 * assumed: an event goes to every subscription that exists when the service fans it out, with
 * the same `eventId` in every subscription's delivery; the fan-out may come later than the
 * event's `occurredAt` (never earlier), and a new subscription receives every event that occurs
 * from this long after its creation on. `occurredAt`, a subscription's `createdAt` and the `Date`
 * header come from the service's one clock.
 */
export const NEW_SUBSCRIPTION_RECEIVES_EVENTS_WITHIN_MS = 5 * 60_000;

/**
 * spec: a delivery URL must be HTTPS (TLS 1.2 or later), and the service is served over HTTPS;
 * assumed: its identity service is too.
 */
export function isHttpsAddress(url: string): boolean {
	return /^https:\/\/[^/]/i.test(url);
}

/** spec: deliveries authenticate with an API key as a query argument. assumed: named `apiKey`. */
export const DELIVERY_KEY_PARAMETER = 'apiKey';

/* ------------------------------------------------------------------------- events */

/**
 * assumed: body of a webhook delivery. spec: a field without a value is null; tolerated when
 * left out as well.
 */
export interface ServiceEvent {
	eventId: string;
	eventType: string;
	occurredAt: string | null;
	subscriptionId: string | null;
	data: Record<string, unknown> | null;
}

/* ------------------------------------------------------------------------- errors */

/** assumed: `{ code, message, details }`; also read OAuth and problem+json fields. */
export interface ServiceError {
	code: string | null;
	message: string | null;
}

/**
 * spec (a bearer token valid 60 minutes): a refused or expired access token is answered 401; the
 * node then renews the token once and sends the request once more.
 */
export const TOKEN_REFUSED_STATUS = 401;

/** assumed (limits are not shown): these statuses mean "wait, then retry". */
export const RETRYABLE_STATUSES = [429, 503];

/**
 * assumed: a 429 means the service did not act on the request, so even a create may be sent
 * again. A 503, like 500, 502 and 504, may come from a gateway after the service acted, so only
 * requests that are harmless to repeat are retried on those.
 */
export const UNPROCESSED_STATUSES = [429];

/** assumed: server faults that may pass; retried only where a repeat is harmless. */
export const TRANSIENT_SERVER_STATUSES = [500, 502, 504];
