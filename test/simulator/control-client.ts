/**
 * A typed client of the simulator's control API (see control.ts), for tests and tools that run
 * in another process than the simulator. Plain HTTP to 127.0.0.1; call `close()` when done.
 */
import { Agent, request } from 'undici';

import type { Asset, Invoice, Subscription } from './contract';
import type { ContractDeviation, ContractViolation } from './contract-check';
import type { AssetChanges, InvoiceEdits } from './data';
import type {
	ActiveFault,
	ClientRecordJson,
	ClientRegistrationJson,
	ClockState,
	DeliveriesResponse,
	DeliveryOptions,
	EmittedEventJson,
	FaultRule,
	IssueInvoiceInput,
	ListPagingDeviation,
	ListShape,
	LogResponse,
	RequestLogFilter,
	SimulatorState,
} from './types';

export class ControlApiError extends Error {
	constructor(
		readonly status: number,
		readonly code: string | null,
		message: string,
	) {
		super(message);
		this.name = 'ControlApiError';
	}
}

export class SimulatorControlClient {
	private readonly agent = new Agent({ keepAliveTimeout: 1000 });

	constructor(readonly controlUrl: string) {}

	state(): Promise<SimulatorState> {
		return this.call('GET', '/control/state');
	}

	registerClient(registration: ClientRegistrationJson): Promise<ClientRecordJson> {
		return this.call('POST', '/control/clients', registration);
	}

	updateClientSecret(clientId: string, clientSecret?: string): Promise<ClientRecordJson> {
		return this.call('POST', `/control/clients/${encodeURIComponent(clientId)}/secret`, {
			clientSecret,
		});
	}

	/** Deletes an API key as in the identity portal; returns the subscriptions that ended with it. */
	deleteClient(clientId: string): Promise<{ endedSubscriptions: Subscription[] }> {
		return this.call('DELETE', `/control/clients/${encodeURIComponent(clientId)}`);
	}

	clock(): Promise<ClockState> {
		return this.call('GET', '/control/clock');
	}

	advanceClock(seconds: number): Promise<ClockState> {
		return this.call('POST', '/control/clock/advance', { seconds });
	}

	faults(): Promise<ActiveFault[]> {
		return this.call('GET', '/control/faults');
	}

	addFault(rule: FaultRule): Promise<ActiveFault> {
		return this.call('POST', '/control/faults', rule);
	}

	removeFault(id: string): Promise<void> {
		return this.call('DELETE', `/control/faults/${encodeURIComponent(id)}`);
	}

	clearFaults(): Promise<void> {
		return this.call('DELETE', '/control/faults');
	}

	log(filter: RequestLogFilter = {}): Promise<LogResponse> {
		const query = new URLSearchParams();
		for (const [name, value] of Object.entries(filter)) {
			if (value !== undefined) query.set(name, String(value));
		}
		const search = query.size > 0 ? `?${query.toString()}` : '';
		return this.call('GET', `/control/log${search}`);
	}

	resetLog(): Promise<void> {
		return this.call('DELETE', '/control/log');
	}

	subscriptions(): Promise<Subscription[]> {
		return this.call('GET', '/control/subscriptions');
	}

	/** Deletes a subscription out of band (as if removed in the provider's portal). */
	deleteSubscription(id: string): Promise<void> {
		return this.call('DELETE', `/control/subscriptions/${encodeURIComponent(id)}`);
	}

	issueInvoice(
		invoice: IssueInvoiceInput = {},
		options: { waitForDelivery?: boolean } = {},
	): Promise<{ invoice: Invoice; event: EmittedEventJson }> {
		return this.call('POST', '/control/invoices', { invoice, ...options });
	}

	/**
	 * Marks an invoice paid (or cancels it, or marks an issued one overdue) at the service, which
	 * also emits the event.
	 */
	changeInvoice(
		invoiceNumber: string,
		change: 'pay' | 'cancel' | 'mark-overdue',
		options: { waitForDelivery?: boolean } = {},
	): Promise<{ invoice: Invoice; event: EmittedEventJson }> {
		return this.call(
			'POST',
			`/control/invoices/${encodeURIComponent(invoiceNumber)}/${change}`,
			options,
		);
	}

	/** Edits an invoice in any status (its due date a week on unless `edits` say); no event. */
	editInvoice(invoiceNumber: string, edits: InvoiceEdits = {}): Promise<{ invoice: Invoice }> {
		return this.call('POST', `/control/invoices/${encodeURIComponent(invoiceNumber)}/edit`, {
			edits,
		});
	}

	/** Gives a record another `updatedAt`, as it is (see Simulator.restamp). */
	restamp(
		kind: 'invoice' | 'asset',
		id: string,
		updatedAt: string,
		options: { deviation?: string } = {},
	): Promise<{ invoice?: Invoice; asset?: Asset }> {
		const resource = kind === 'invoice' ? 'invoices' : 'assets';
		return this.call('POST', `/control/${resource}/${encodeURIComponent(id)}/restamp`, {
			updatedAt,
			...options,
		});
	}

	/** The lists' order and counting, and the subscription list's form (within the contract). */
	setListShape(shape: Partial<ListShape>): Promise<void> {
		return this.call('POST', '/control/lists', shape);
	}

	/** Updates (the next site unless `changes` say) or retires an asset, which also emits the event. */
	changeAsset(
		assetId: string,
		change: 'update' | 'retire',
		options: { changes?: AssetChanges; waitForDelivery?: boolean } = {},
	): Promise<{ asset: Asset; event: EmittedEventJson }> {
		return this.call('POST', `/control/assets/${encodeURIComponent(assetId)}/${change}`, options);
	}

	emitEvent(
		eventType: string,
		data: Record<string, unknown>,
		options: { waitForDelivery?: boolean; deviation?: string } = {},
	): Promise<EmittedEventJson> {
		return this.call('POST', '/control/events', { eventType, data, ...options });
	}

	/** What the simulator's contract check found: violations, and deliberate deviations. */
	contract(): Promise<{ violations: ContractViolation[]; deviations: ContractDeviation[] }> {
		return this.call('GET', '/control/contract');
	}

	deliveries(
		filter: { eventId?: string; subscriptionId?: string } = {},
	): Promise<DeliveriesResponse> {
		const query = new URLSearchParams();
		if (filter.eventId) query.set('eventId', filter.eventId);
		if (filter.subscriptionId) query.set('subscriptionId', filter.subscriptionId);
		const search = query.size > 0 ? `?${query.toString()}` : '';
		return this.call('GET', `/control/deliveries${search}`);
	}

	resetDeliveries(): Promise<void> {
		return this.call('DELETE', '/control/deliveries');
	}

	setDeliveryOptions(options: Partial<DeliveryOptions>): Promise<DeliveryOptions> {
		return this.call('POST', '/control/deliveries/options', options);
	}

	waitForDeliveries(timeoutMs?: number): Promise<void> {
		return this.call('POST', '/control/deliveries/wait', { timeoutMs });
	}

	/** Test switches: deliberate contract deviations; null restores the contract. */
	setDeviations(deviations: {
		listPaging?: ListPagingDeviation | null;
		createCommitDelayMs?: number | null;
	}): Promise<void> {
		return this.call('POST', '/control/deviations', deviations);
	}

	/** Test switch: error answers quote the request back, secrets included (echo.ts). */
	setEchoRequests(on: boolean): Promise<void> {
		return this.call('POST', '/control/echo', { requests: on });
	}

	seed(options: {
		invoices?: number;
		assets?: number;
		seed?: number | string;
	}): Promise<{ invoices: number; assets: number; seed: number | string }> {
		return this.call('POST', '/control/seed', options);
	}

	close(): Promise<void> {
		return this.agent.close();
	}

	private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
		const response = await request(new URL(path, this.controlUrl), {
			method: method as 'GET',
			dispatcher: this.agent,
			headers: body === undefined ? {} : { 'content-type': 'application/json' },
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const text = await response.body.text();
		if (response.statusCode >= 400) {
			let code: string | null = null;
			let message = text;
			const parsed = parseJson(text) as { code?: unknown; message?: unknown } | undefined;
			if (parsed && typeof parsed.message === 'string') message = parsed.message;
			if (parsed && typeof parsed.code === 'string') code = parsed.code;
			throw new ControlApiError(
				response.statusCode,
				code,
				`Control API ${method} ${path} answered ${response.statusCode}: ${message}`,
			);
		}
		return (text === '' ? undefined : JSON.parse(text)) as T;
	}
}

function parseJson(text: string): unknown {
	try {
		return JSON.parse(text);
	} catch {
		return undefined;
	}
}
