/**
 * The Data Service's invoice and asset lists in memory, on a simulated clock: the provider's side
 * of the Polling Trigger's tests in process (test/harness/in-process-poller.ts), with no HTTP, no
 * TLS and no wall clock. It keeps the contract's rules as the simulator does, with the
 * simulator's own parts: the records and their lifecycle (data.ts: stamps to the second, changes
 * listed late by a listing lag), the lists' answers (routes.ts `answerList`: inclusive
 * `updatedFrom`/`updatedTo`/`issuedFrom`/`issuedTo`, `page`/`pageSize` up to 100, the envelope
 * with a total or `null`, by id or by `updatedAt`), the faults (faults.ts: status with
 * `Retry-After`, dropped connections, latency, holds; by probability, times, skip) and the request log.
 *
 * Choices of its own:
 * - Its clock is n8n's (the test's simulated time) plus an offset: `clock.advance` moves the
 *   service's clock alone, as the simulator's does against the real clock. Every answer carries
 *   its time in the `Date` header.
 * - Each request takes `latencyMs` of simulated time, half on the way in and half on the way out;
 *   a fault's latency comes on top, before the request is handled (after it with `afterHandling`).
 * - `onRequest` is told of each request as it arrives, before it is handled: a test changes
 *   records there while a poll reads a list page by page.
 */
import { SERVICE_PATHS, toServiceTimestamp, type Asset, type Invoice } from './contract';
import { DataStore, DEFAULT_SEED, type AssetChanges, type InvoiceEdits } from './data';
import { FaultInjector } from './faults';
import { serviceError, type SimResponse } from './http-util';
import { RequestLog } from './request-log';
import { answerList, faultResponse, type ListSource } from './routes';
import type {
	IssueInvoiceInput,
	ListShape,
	LoggedRoute,
	RequestLogEntry,
	RequestLogFilter,
	RouteName,
} from './types';

/** The simulated time the service lives in: n8n's clock, and waits on it. */
export interface SimulatedTime {
	now(): number;
	sleep(ms: number): Promise<void>;
}

export interface InMemoryServiceOptions {
	/** Seeded data: 1,050 invoices and 300 assets unless given (as the simulator). */
	invoices?: number;
	assets?: number;
	seed?: number | string;
	/** The service's clock against n8n's, e.g. -180000 for three minutes behind. */
	clockOffsetMs?: number;
	/** Simulated time each request takes (DEFAULT_LATENCY_MS unless given). */
	latencyMs?: number;
}

/** About what a request to a nearby service takes through n8n's HTTP helpers (a new TLS handshake each). */
export const DEFAULT_LATENCY_MS = 20;

/** A request as the service receives it: its path and its query arguments as sent. */
export interface ServiceRequest {
	method: string;
	path: string;
	query: URLSearchParams;
}

/** An answer, or a connection dropped without one. */
export type ServiceAnswer =
	| { status: number; headers: Record<string, string>; body: unknown }
	| { dropped: true };

/** The list routes: the in-memory service answers these alone (what a poll reads). */
const LIST_ROUTES = (['invoices.list', 'assets.list'] as const).map((route) => ({
	route,
	path: SERVICE_PATHS[route],
}));

const CONTRACT_LIST_SHAPE: ListShape = {
	order: 'id',
	totalItems: 'counted',
	subscriptionList: 'bare array',
};

export class InMemoryService {
	private offsetMs: number;

	private readonly store: DataStore;

	private shape: ListShape = { ...CONTRACT_LIST_SHAPE };

	private readonly lists: ListSource;

	private readonly requestLog = new RequestLog({ issued: 0 });

	readonly faults: FaultInjector;

	/** Simulated time each request takes; a test may change it. */
	latencyMs: number;

	/** Told of each request as it arrives, before it is handled (changes made while a poll reads). */
	onRequest?: (request: { route: LoggedRoute; query: URLSearchParams }) => void;

	constructor(
		private readonly time: SimulatedTime,
		options: InMemoryServiceOptions = {},
	) {
		this.offsetMs = options.clockOffsetMs ?? 0;
		this.latencyMs = options.latencyMs ?? DEFAULT_LATENCY_MS;
		const seed = options.seed ?? DEFAULT_SEED;
		this.store = new DataStore({ invoices: options.invoices, assets: options.assets, seed });
		this.faults = new FaultInjector(seed);
		this.lists = {
			data: this.store,
			listShape: () => this.shape,
			listPagingDeviation: () => undefined,
		};
	}

	/** The service's clock: n8n's plus an offset that `advance` grows (a jump of the service's clock). */
	readonly clock = {
		now: (): Date => new Date(this.nowMs()),
		advance: (ms: number): Date => {
			if (!Number.isFinite(ms) || ms < 0) {
				throw new Error(`The clock only moves forward; got ${ms} ms.`);
			}
			this.offsetMs += ms;
			return this.clock.now();
		},
		/** The service's time less n8n's (ms). */
		offsetMs: (): number => this.offsetMs,
	};

	readonly data = {
		invoices: (): readonly Invoice[] => this.store.invoices,
		assets: (): readonly Asset[] => this.store.assets,
		invoice: (invoiceNumber: string) => this.store.invoice(invoiceNumber),
		asset: (assetId: string) => this.store.asset(assetId),
		/** How long after a change (ms) the lists show it, per changed record; undefined: at once. */
		setListingLag: (lag: ((record: Invoice | Asset) => number) | undefined) =>
			this.store.setListingLag(lag),
	};

	readonly log = {
		count: (route?: LoggedRoute) => this.requestLog.count(route),
		countsByRoute: () => this.requestLog.countsByRoute(),
		entries: (filter?: RequestLogFilter) => this.requestLog.entries(filter),
		reset: () => this.requestLog.reset(),
	};

	/** Holds the given records instead of the seeded ones (DataStore.load). */
	load(records: { invoices: readonly Invoice[]; assets: readonly Asset[] }) {
		this.store.load(records);
	}

	/** No `deviation` option as the simulator's: the in-memory service checks no answer against the contract. */
	issueInvoice(input?: IssueInvoiceInput): { invoice: Invoice } {
		return { invoice: this.store.issue(this.clock.now(), input) };
	}

	payInvoice(invoiceNumber: string): { invoice: Invoice } {
		return { invoice: this.store.payInvoice(invoiceNumber, this.clock.now()) };
	}

	cancelInvoice(invoiceNumber: string): { invoice: Invoice } {
		return { invoice: this.store.cancelInvoice(invoiceNumber, this.clock.now()) };
	}

	editInvoice(invoiceNumber: string, edits?: InvoiceEdits): Invoice {
		return this.store.editInvoice(invoiceNumber, this.clock.now(), edits);
	}

	updateAsset(assetId: string, changes?: AssetChanges): { asset: Asset } {
		return { asset: this.store.updateAsset(assetId, this.clock.now(), changes) };
	}

	retireAsset(assetId: string): { asset: Asset } {
		return { asset: this.store.retireAsset(assetId, this.clock.now()) };
	}

	/** Another `updatedAt` for a record, as it is (see DataStore.restamp). */
	restamp(kind: 'invoice' | 'asset', id: string, updatedAt: string): Invoice | Asset {
		return this.store.restamp(kind, id, updatedAt);
	}

	/** The lists' order and counting; what is not given is the contract's default (by id, counted). */
	setListShape(shape: Partial<ListShape>) {
		this.shape = { ...CONTRACT_LIST_SHAPE, ...shape };
	}

	/** One request, answered in simulated time. */
	async request({ method, path, query }: ServiceRequest): Promise<ServiceAnswer> {
		const route = LIST_ROUTES.find((list) => list.path === path && method === 'GET')?.route;
		const entry: Omit<RequestLogEntry, 'seq'> = {
			at: toServiceTimestamp(this.clock.now()),
			receivedAtMs: this.time.now(),
			remotePort: null,
			route: route ?? 'unknown',
			method,
			path,
			params: {},
			query: Object.fromEntries(query),
			status: null,
			errorCode: null,
			clientId: null,
			environment: 'production',
			fault: null,
			durationMs: 0,
		};
		const finish = (answer: SimResponse | null): ServiceAnswer => {
			entry.status = answer?.status ?? null;
			entry.durationMs = this.time.now() - entry.receivedAtMs;
			this.requestLog.add(entry);
			if (!answer) return { dropped: true };
			const headers = { date: this.clock.now().toUTCString(), ...answer.headers };
			return { status: answer.status, headers, body: answer.body };
		};
		const wayIn = this.latencyMs / 2;
		await this.time.sleep(wayIn);
		this.requestLog.begin(entry.route);
		this.onRequest?.({ route: entry.route, query });
		const answer = await this.handle(route, method, query, entry);
		const answered = finish(answer);
		await this.time.sleep(this.latencyMs - wayIn);
		return answered;
	}

	/** The answer to a request (null: the connection dropped), with its faults, as routes.ts `handle`. */
	private async handle(
		route: RouteName | undefined,
		method: string,
		query: URLSearchParams,
		entry: Omit<RequestLogEntry, 'seq'>,
	): Promise<SimResponse | null> {
		if (route === undefined) return serviceError(404, 'not_found', 'No such endpoint.');
		const fault = this.faults.take(route, method);
		const late = fault?.afterHandling ? fault : undefined;
		if (fault && !late) {
			if (fault.hold) {
				entry.fault = 'hold';
				if (!(await this.faults.hold(fault.id))) return null;
			}
			if (fault.latencyMs !== undefined) {
				entry.fault = 'latency';
				await this.time.sleep(fault.latencyMs);
			}
			if (fault.drop) {
				entry.fault = 'drop';
				return null;
			}
			if (fault.status !== undefined) {
				entry.fault = 'status';
				return faultResponse('service', fault);
			}
		}
		const answer = answerList(
			this.lists,
			route as 'invoices.list' | 'assets.list',
			query,
			this.clock.now().getTime(),
		);
		if (!late) return answer;
		// The service did the work; the answer is lost or replaced on its way back.
		if (late.hold && !(await this.faults.hold(late.id))) return null;
		if (late.latencyMs !== undefined) await this.time.sleep(late.latencyMs);
		const delayed = late.latencyMs === undefined ? 'hold' : 'latency';
		entry.fault = late.drop ? 'drop' : late.status === undefined ? delayed : 'status';
		if (late.drop) return null;
		return late.status === undefined ? answer : faultResponse('service', late);
	}

	private nowMs(): number {
		return this.time.now() + this.offsetMs;
	}
}
