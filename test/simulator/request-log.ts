/**
 * Every request the identity service and the service API received. Entries never hold a client
 * secret, a token or a delivery key: no headers or bodies are kept, and secret-looking query
 * values are redacted. Counts per route survive the entry cap (the oldest entries go first).
 */
import type { TokenStore } from './identity';
import type { LoggedRoute, RequestLogEntry, RequestLogFilter } from './types';

export const DEFAULT_LOG_LIMIT = 100_000;

export class RequestLog {
	private list: RequestLogEntry[] = [];
	private counts = new Map<LoggedRoute, number>();
	private seq = 0;
	private tokensAtReset = 0;
	private inFlight = new Map<LoggedRoute, number>();
	private peaks = new Map<LoggedRoute, number>();

	constructor(
		/** The identity service's token count (none for the in-memory service, which has no tokens). */
		private readonly tokens: Pick<TokenStore, 'issued'>,
		private readonly limit = DEFAULT_LOG_LIMIT,
	) {}

	/** A request on `route` arrived; `add` ends it. */
	begin(route: LoggedRoute) {
		const now = (this.inFlight.get(route) ?? 0) + 1;
		this.inFlight.set(route, now);
		this.peaks.set(route, Math.max(now, this.peaks.get(route) ?? 0));
	}

	/** Requests on `route` being handled now. */
	open(route: LoggedRoute): number {
		return this.inFlight.get(route) ?? 0;
	}

	/** The most requests on `route` handled at the same time since the last reset. */
	peakInFlight(route: LoggedRoute): number {
		return this.peaks.get(route) ?? 0;
	}

	add(entry: Omit<RequestLogEntry, 'seq'>) {
		const open = this.inFlight.get(entry.route) ?? 0;
		if (open > 0) this.inFlight.set(entry.route, open - 1);
		this.list.push({ ...entry, seq: ++this.seq });
		this.counts.set(entry.route, (this.counts.get(entry.route) ?? 0) + 1);
		if (this.list.length > this.limit) this.list.splice(0, Math.ceil(this.limit / 10));
	}

	/** Requests received on `route` since the last reset (every route when omitted). */
	count(route?: LoggedRoute, filter: Omit<RequestLogFilter, 'route'> = {}): number {
		if (Object.keys(filter).length > 0) return this.entries({ ...filter, route }).length;
		if (route === undefined) return [...this.counts.values()].reduce((sum, n) => sum + n, 0);
		return this.counts.get(route) ?? 0;
	}

	countsByRoute(): Partial<Record<LoggedRoute, number>> {
		return Object.fromEntries(this.counts);
	}

	entries(filter: RequestLogFilter = {}): RequestLogEntry[] {
		const method = filter.method?.toUpperCase();
		return this.list
			.filter(
				(entry) =>
					(filter.route === undefined || entry.route === filter.route) &&
					(method === undefined || entry.method === method) &&
					(filter.status === undefined || entry.status === filter.status) &&
					(filter.clientId === undefined || entry.clientId === filter.clientId) &&
					(filter.environment === undefined || entry.environment === filter.environment),
			)
			.map((entry) => ({ ...entry, params: { ...entry.params }, query: { ...entry.query } }));
	}

	/** Access tokens issued since the last reset. */
	tokensIssued(): number {
		return this.tokens.issued - this.tokensAtReset;
	}

	reset() {
		this.list = [];
		this.counts.clear();
		this.peaks = new Map(this.inFlight);
		this.tokensAtReset = this.tokens.issued;
	}
}
