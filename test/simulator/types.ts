/** Public types of the provider simulator, shared by the simulator, its control API and client. */
import type { Asset, Invoice, InvoiceLine, ServiceEvent } from './contract';

export const ENVIRONMENTS = ['production', 'sandbox'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

/** The route names used by faults and the request log. */
export const ROUTES = [
	'token',
	'subscriptions.create',
	'subscriptions.list',
	'subscriptions.delete',
	'invoices.get',
	'invoices.list',
	'assets.get',
	'assets.list',
] as const;
export type RouteName = (typeof ROUTES)[number];
/** Requests that match no route (or a known path with the wrong method) are logged as 'unknown'. */
export type LoggedRoute = RouteName | 'unknown';

/* ------------------------------------------------------------------ clients */

export interface ClientRegistration {
	clientId?: string;
	clientSecret?: string;
	/** `api://invoicing-assets/.default` unless given. */
	scope?: string;
	environment: Environment;
	/** Now + 12 months unless given; later than that is refused, as the identity portal does. */
	keyExpiresAt?: Date;
	displayName?: string;
}

/** What the identity portal shows once at creation, secret included. */
export interface ClientRecord {
	clientId: string;
	clientSecret: string;
	scope: string;
	environment: Environment;
	keyExpiresAt: Date;
	createdAt: Date;
	displayName: string;
}

/* ------------------------------------------------------------------- faults */

export interface FaultRule {
	route: RouteName;
	/** Only requests with this method; any method otherwise. */
	method?: string;
	/** Answer with this status instead of handling the request. */
	status?: number;
	/** Response body: an object is sent as JSON, a string as is; a route-style error body otherwise. */
	body?: unknown;
	headers?: Record<string, string>;
	/** `Retry-After` header: seconds, or an HTTP date. */
	retryAfter?: number | string;
	/** Wait this long (real time) before answering or handling. */
	latencyMs?: number;
	/** Destroy the socket without a response. */
	drop?: boolean;
	/**
	 * Hold the request (with `afterHandling`, its answer) until this fault is removed (`remove`,
	 * `clear`, the control API's DELETE), then apply the rest of the fault: a wait ended by the
	 * test, not by the clock. The simulator closing drops what it holds.
	 */
	hold?: boolean;
	/**
	 * Handle the request first (the service does the work), then drop the connection or answer
	 * `status` instead of the real answer: an answer lost on its way back; with `latencyMs` alone,
	 * the real answer after that wait (a slow answer to a request already authenticated and done).
	 * Before handling otherwise.
	 */
	afterHandling?: boolean;
	/** Apply to the next N matching requests only; every matching request otherwise. */
	times?: number;
	/** Let this many matching requests through first (e.g. to fail the second page of a list). */
	skip?: number;
	/** Apply to a matching request with this probability (seeded RNG); always otherwise. */
	probability?: number;
}

export interface ActiveFault extends FaultRule {
	id: string;
	/** How many more requests it applies to; null when unlimited. */
	remaining: number | null;
	hits: number;
}

/* ------------------------------------------------------------ deviations */

/**
 * DELIBERATE CONTRACT DEVIATIONS of the invoice and asset lists, to test the package against a
 * service that pages differently from the contract. Answers made under one carry
 * `deviation: true` in the route's answer (see routes.ts) so that contract validation can exempt them.
 * - `ignore-paging`: every answer holds the whole (filtered) list, whatever page and pageSize;
 *   `page`, `pageSize` and `totalItems` are null.
 * - `ignore-page`: pageSize is honoured but every answer is page 1; `page` echoes the page asked
 *   for, and `totalItems` is the real total, or null with `totalItems: 'null'`.
 * - `max-page-size`: pages hold at most `maxPageSize` records whatever `pageSize` asks for (a
 *   service with a lower page limit); `pageSize` says the size used, `totalItems` the real total,
 *   or null under the list shape `totalItems: 'null'`.
 */
export type ListPagingDeviation =
	| { mode: 'ignore-paging' }
	| { mode: 'ignore-page'; totalItems: 'reported' | 'null' }
	| { mode: 'max-page-size'; maxPageSize: number };

/**
 * The order of list answers (the contract assumes none): by id (the default), or by `updatedAt`
 * (oldest or newest first, ties by id), where a record that changes moves to the other end.
 */
export type ListOrder = 'id' | 'updatedAt' | 'updatedAt-desc';

/**
 * How the lists answer, within the contract (test switches): the order of the invoice and asset
 * lists (none is part of the contract; by id unless set); whether `totalItems` is counted or
 * `null` (a service that does not count); and the subscription list's form, of the two the
 * contract allows: a bare array (the default) or the page envelope, paged like the other lists.
 */
export interface ListShape {
	order: ListOrder;
	totalItems: 'counted' | 'null';
	subscriptionList: SubscriptionListForm;
}

export const SUBSCRIPTION_LIST_FORMS = ['bare array', 'page envelope'] as const;
export type SubscriptionListForm = (typeof SUBSCRIPTION_LIST_FORMS)[number];

/* -------------------------------------------------------------- request log */

export interface RequestLogEntry {
	seq: number;
	/** Simulated time of arrival, `YYYY-MM-DDTHH:MM:SSZ`. */
	at: string;
	/** Real time of arrival in milliseconds since the epoch, to a fraction of a millisecond. */
	receivedAtMs: number;
	/** The client's source port (what a provider's access log shows beside its address). */
	remotePort: number | null;
	route: LoggedRoute;
	method: string;
	/** The raw path, without the query. */
	path: string;
	/** Path parameters, URL-decoded once. */
	params: Record<string, string>;
	/** Query arguments; values of secret-looking names are redacted. */
	query: Record<string, string | string[]>;
	/** null when the request was dropped. */
	status: number | null;
	/** Error code of an error answer (`code`, or `error` on the token route). */
	errorCode: string | null;
	/** The client the bearer token (or the token request) belongs to; never its secret. */
	clientId: string | null;
	environment: Environment | null;
	fault: 'status' | 'drop' | 'latency' | 'hold' | null;
	/** The deliberate contract deviation the answer was made under (see SimResponse.deviation). */
	deviation?: string;
	durationMs: number;
}

/** A request as it arrives, before it is handled (its client's connection is still open). */
export interface ArrivingRequest {
	route: LoggedRoute;
	method: string;
	remotePort: number | null;
}

export interface RequestLogFilter {
	route?: LoggedRoute;
	method?: string;
	status?: number;
	clientId?: string;
	environment?: Environment;
}

/* --------------------------------------------------------------- deliveries */

export interface DeliveryOptions {
	/** Waits (ms) before each retry; attempts = length + 1. Default [1000, 5000, 30000]. */
	retrySchedule: number[];
	/** Deliver every event twice, with the same eventId (the second after the first completes). */
	duplicate: boolean;
	/** Time limit of one attempt (ms). */
	timeoutMs: number;
	/** A new subscription receives the events that occur from this long after its createdAt on (ms). */
	activationMs: number;
}

export type DeliveryResult = 'delivered' | 'retrying' | 'failed' | 'cancelled' | 'refused';

export interface DeliveryAttempt {
	eventId: string;
	eventType: string;
	subscriptionId: string;
	/** The notification URL with the apiKey value redacted. */
	url: string;
	attempt: number;
	/** 1 for the first delivery, 2 for the duplicate. */
	copy: number;
	/** Simulated time of the attempt. */
	at: string;
	status: number | null;
	error: string | null;
	durationMs: number;
	result: DeliveryResult;
}

export interface DeliveryOutcome {
	eventId: string;
	subscriptionId: string;
	copy: number;
	result: Exclude<DeliveryResult, 'retrying'>;
	attempts: number;
	lastStatus: number | null;
	lastError: string | null;
}

export interface EmittedEvent {
	eventId: string;
	eventType: string;
	occurredAt: string;
	data: Record<string, unknown>;
	/** One per subscription that takes this event type. */
	deliveries: Array<{
		subscriptionId: string;
		event: ServiceEvent;
		done: Promise<DeliveryOutcome[]>;
	}>;
	/** Every outcome of this event, duplicates included. */
	done: Promise<DeliveryOutcome[]>;
}

export type IssueInvoiceInput = Partial<Omit<Invoice, 'lines'>> & {
	lines?: Array<Partial<InvoiceLine>>;
};

export interface IssuedInvoice {
	invoice: Invoice;
	event: EmittedEvent;
}

export interface ChangedAsset {
	asset: Asset;
	event: EmittedEvent;
}

/* ------------------------------------------------------ control API (JSON) */

export interface ClientRecordJson {
	clientId: string;
	clientSecret: string;
	scope: string;
	environment: Environment;
	keyExpiresAt: string;
	createdAt: string;
	displayName: string;
}

export interface ClientRegistrationJson {
	clientId?: string;
	clientSecret?: string;
	scope?: string;
	environment: Environment;
	/** ISO 8601 date or timestamp. */
	keyExpiresAt?: string;
	displayName?: string;
}

export interface SimulatorState {
	identityUrl: string;
	tokenUrl: string;
	serviceUrl: string;
	sandboxServiceUrl: string;
	controlUrl: string;
	caCertPath: string;
	clock: ClockState;
	counts: {
		invoices: number;
		assets: number;
		subscriptions: number;
		clients: number;
		tokensIssued: number;
		deliveriesInFlight: number;
	};
	seed: number | string;
	defaultClient: ClientRecordJson;
	deliveryOptions: DeliveryOptions;
}

export interface ClockState {
	now: string;
	offsetMs: number;
}

export interface LogResponse {
	counts: Partial<Record<LoggedRoute, number>>;
	tokensIssued: number;
	entries: RequestLogEntry[];
}

export interface EmittedEventJson {
	eventId: string;
	eventType: string;
	occurredAt: string;
	data: Record<string, unknown>;
	subscriptionIds: string[];
	/** Present when the request asked to wait for delivery. */
	outcomes?: DeliveryOutcome[];
}

export interface DeliveriesResponse {
	inFlight: number;
	options: DeliveryOptions;
	entries: DeliveryAttempt[];
}
