/**
 * The provider simulator: a local implementation of the Invoicing and Managed-Assets Data Service
 * as the contract document (docs/service-contract.openapi.yaml) describes it, with test
 * controls (clock, client registry, fault injection, request log, event deliveries).
 *
 * Listeners, all on 127.0.0.1:
 * - identity service (HTTPS): `identityUrl`; token endpoint at `identityUrl + TOKEN_PATH`;
 * - service API (HTTPS): `serviceUrl` (production) and `sandboxServiceUrl` (`/sandbox` prefix);
 * - control API (plain HTTP): `controlUrl`, see control.ts.
 * HTTPS uses a certificate for localhost, 127.0.0.1 and ::1, issued by the CA in
 * `options.caDir`, else in env INVOICING_SIM_CA_DIR (created there when missing), else by a
 * fresh CA in a temporary folder. TLS below 1.2 is refused.
 *
 * The behaviour chosen where the contract is silent is described at the top of routes.ts,
 * identity.ts, subscriptions.ts, data.ts and deliveries.ts. Event data of `issueInvoice`
 * (assumed): `{ invoiceNumber, customerNumber, status, issueDate, currency, totalAmount, assetIds }`.
 */
import {
	type AddressInfo,
	createHttpServer,
	createHttpsServer,
	join,
	mkdtempSync,
	process,
	readFileSync,
	rmSync,
	type Server,
	type Socket,
	tmpdir,
} from '../tools/node-apis';

import {
	billedAssetIds,
	TOKEN_PATH,
	type Asset,
	type Invoice,
	type Subscription,
} from './contract';
import { SimulatorClock } from './clock';
import { createControlHandler } from './control';
import {
	ContractMonitor,
	type ContractDeviation,
	type ContractViolation,
	type ToleranceFilter,
} from './contract-check';
import { DataStore, DEFAULT_SEED, type AssetChanges, type InvoiceEdits } from './data';
import { DeliveryEngine } from './deliveries';
import { FaultInjector } from './faults';
import { clientJson, ClientRegistry, TokenStore } from './identity';
import { RequestLog } from './request-log';
import { SecretRecord, type SecretKind } from './secret-record';
import { createRequestHandler, SANDBOX_PATH_PREFIX } from './routes';
import { Sleeper } from './sleeper';
import { SubscriptionStore } from './subscriptions';
import {
	createCertificateAuthority,
	findCertificateAuthority,
	issueCertificate,
	type CertificateFiles,
} from './tls';
import type {
	ActiveFault,
	ArrivingRequest,
	ChangedAsset,
	ClientRecord,
	ClientRegistration,
	DeliveryAttempt,
	DeliveryOptions,
	EmittedEvent,
	FaultRule,
	IssuedInvoice,
	IssueInvoiceInput,
	ListPagingDeviation,
	ListShape,
	LoggedRoute,
	RequestLogEntry,
	RequestLogFilter,
	SimulatorState,
} from './types';

export * from './types';
export {
	DEVIATION_HEADER,
	describeViolations,
	takeContractViolations,
	type ContractDeviation,
	type ContractViolation,
	type ToleranceFilter,
} from './contract-check';
export { DEFAULT_SCOPE } from './identity';
export { SECRET_MARKER_ENV, SECRET_RECORD_DIR_ENV } from './secret-record';
export { DEFAULT_PAGE_SIZE, SANDBOX_PATH_PREFIX } from './routes';
export {
	ASSET_FIELDS,
	INVOICE_FIELDS,
	INVOICE_LINE_FIELDS,
	type AssetChanges,
	type InvoiceEdits,
} from './data';

/** How the lists answer unless a test says otherwise. */
const CONTRACT_LIST_SHAPE: ListShape = {
	order: 'id',
	totalItems: 'counted',
	subscriptionList: 'bare array',
};

/** Env var naming a folder with ca.pem and ca.key; see test/tools/with-test-ca.ts. */
export const CA_DIR_ENV = 'INVOICING_SIM_CA_DIR';

export interface SimulatorOptions {
	/** Folder holding (or to receive) ca.pem and ca.key. */
	caDir?: string;
	/** Fixed ports; a free port for each one not given. */
	ports?: { identity?: number; service?: number; control?: number };
	/** When a given port is taken, use a free one instead of failing. */
	fallbackToFreePorts?: boolean;
	/** Seeded data: 1,050 invoices and 300 assets unless given. */
	invoices?: number;
	assets?: number;
	seed?: number | string;
	delivery?: Partial<DeliveryOptions>;
	/** Overrides for the default (production) client registered at start. */
	defaultClient?: Partial<ClientRegistration>;
	/** Extra CA certificates (PEM) trusted for deliveries, besides the default store and the simulator's CA. */
	trustedCaPems?: string[];
	/** Most request-log entries kept (counts are kept regardless). */
	logLimit?: number;
	/** Validate traffic against the contract document (default); false only for benchmarks. */
	checkContract?: boolean;
	/**
	 * Told synchronously of each request as it arrives, while its client's connection is open
	 * (e.g. to find which local process owns the source port).
	 */
	onRequest?: (request: ArrivingRequest) => void;
	/** The service's clock against the real one, e.g. -180000 for three minutes behind. */
	clockOffsetMs?: number;
	/** Every error answer quotes the request back (see setEchoRequests); off unless given. */
	echoRequests?: boolean;
}

export interface SimulatorData {
	invoices(): readonly Invoice[];
	assets(): readonly Asset[];
	invoice(invoiceNumber: string): Invoice | undefined;
	asset(assetId: string): Asset | undefined;
	customerNumbers(): string[];
	/**
	 * How long after a change (ms) the invoice and asset lists show it, per changed record (a test
	 * switch within the contract's 5-minute bound); undefined: at once.
	 */
	setListingLag(lag: ((record: Invoice | Asset) => number) | undefined): void;
}

export interface SimulatorRequestLog {
	count(route?: LoggedRoute, filter?: Omit<RequestLogFilter, 'route'>): number;
	countsByRoute(): Partial<Record<LoggedRoute, number>>;
	entries(filter?: RequestLogFilter): RequestLogEntry[];
	tokensIssued(): number;
	/** The most requests on `route` handled at the same time since the last reset. */
	peakInFlight(route: LoggedRoute): number;
	/** Requests on `route` being handled now. */
	inFlight(route: LoggedRoute): number;
	reset(): void;
}

export interface Simulator {
	identityUrl: string;
	tokenUrl: string;
	serviceUrl: string;
	sandboxServiceUrl: string;
	controlUrl: string;
	caCertPath: string;
	caDir: string;
	defaultClient: ClientRecord;
	defaultSandboxClient: ClientRecord;
	clock: {
		now(): Date;
		advance(ms: number): Date;
		offsetMs(): number;
	};
	registerClient(registration: ClientRegistration): ClientRecord;
	/** Rotates the client's secret (random unless given); returns the record with the new secret. */
	updateClientSecret(clientId: string, newSecret?: string): ClientRecord;
	/**
	 * Deletes an API key, as its owner does in the identity portal: its tokens are refused from
	 * now on, and its subscriptions end with it (no more deliveries, retries included). Returns
	 * the subscriptions that ended.
	 */
	deleteClient(clientId: string): Subscription[];
	data: SimulatorData;
	seed(options?: { invoices?: number; assets?: number; seed?: number | string }): {
		invoices: number;
		assets: number;
		seed: number | string;
	};
	/**
	 * `deviation`: why this invoice breaks the contract on purpose (e.g. a number outside its
	 * pattern); answers that carry it, and its event's deliveries, are then not checked.
	 */
	issueInvoice(input?: IssueInvoiceInput, options?: { deviation?: string }): IssuedInvoice;
	/** `deviation`: why this event breaks the contract on purpose (its deliveries are then not checked). */
	emitEvent(
		eventType: string,
		data: Record<string, unknown>,
		options?: { deviation?: string },
	): EmittedEvent;
	/** The contract check of every request, answer and delivery (see contract-check.ts). */
	contract: {
		violations(): ContractViolation[];
		deviations(): ContractDeviation[];
		/** Until the running test ends, violations that match are deliberate deviations. */
		tolerate(reason: string, filter: ToleranceFilter): void;
	};
	/** Marks an issued invoice overdue (updatedAt moves on) and emits invoice.overdue. */
	markInvoiceOverdue(invoiceNumber: string): IssuedInvoice;
	/** Marks an issued or overdue invoice paid (updatedAt moves on) and emits invoice.paid. */
	payInvoice(invoiceNumber: string): IssuedInvoice;
	/** Cancels an issued or overdue invoice and emits invoice.cancelled. */
	cancelInvoice(invoiceNumber: string): IssuedInvoice;
	/**
	 * Edits an invoice in any status (its due date a week on unless `edits` say); its status stays.
	 * No event is emitted: the contract has none for an edit.
	 */
	editInvoice(invoiceNumber: string, edits?: InvoiceEdits): Invoice;
	/**
	 * Changes an asset (the next site unless `changes` say; a retired asset keeps its status) and
	 * emits asset.updated.
	 */
	updateAsset(assetId: string, changes?: AssetChanges): ChangedAsset;
	/** Retires an asset and emits asset.retired. */
	retireAsset(assetId: string): ChangedAsset;
	/** Deletes an asset (no event): its get answers 404; invoices billing it keep their lines. */
	deleteAsset(assetId: string): boolean;
	/**
	 * Gives a record another `updatedAt`, as it is (a stamp a service should not give: in the
	 * future, going back, or in another form); nothing else changes and no event is emitted.
	 * `deviation`: why the stamp breaks the contract (its form), so answers carrying it are exempt.
	 */
	restamp(
		kind: 'invoice' | 'asset',
		id: string,
		updatedAt: string,
		options?: { deviation?: string },
	): Invoice | Asset;
	/** Every client's subscriptions; `create` and `insert` name the owning client's ID. */
	subscriptions: SubscriptionStore;
	/**
	 * DELIBERATE CONTRACT DEVIATION (test switch): makes the invoice and asset lists page
	 * differently from the contract; undefined restores the contract's paging.
	 */
	setListPagingDeviation(deviation: ListPagingDeviation | undefined): void;
	/**
	 * How the lists answer, within the contract (which assumes no order, allows a null
	 * `totalItems`, and a subscription list in either form); what is not given is the default:
	 * by id, counted, the subscription list a bare array.
	 */
	setListShape(shape: Partial<ListShape>): void;
	/**
	 * Makes a subscription create commit late: it answers at once, but the subscription exists
	 * only `ms` later (real time). undefined: at once again.
	 */
	setCreateCommitDelay(ms: number | undefined): void;
	/**
	 * Test switch: every error answer of the identity service and the Data Service quotes the
	 * request back (URL, headers, body: secrets included), plain, JSON-escaped and URL-encoded
	 * (echo.ts), as a careless service or a broken gateway does.
	 */
	setEchoRequests(on: boolean): void;
	faults: {
		add(rule: FaultRule): ActiveFault;
		remove(id: string): boolean;
		clear(): void;
		list(): ActiveFault[];
	};
	log: SimulatorRequestLog;
	/** Every client secret, token and delivery key the simulator made or received, with its kind. */
	secrets(): ReadonlyMap<string, SecretKind>;
	deliveries: {
		entries(filter?: { eventId?: string; subscriptionId?: string }): DeliveryAttempt[];
		options(): DeliveryOptions;
		setOptions(options: Partial<DeliveryOptions>): DeliveryOptions;
		inFlight(): number;
		reset(): void;
	};
	/** Resolves once no delivery is running or waiting for a retry (rejects after `timeoutMs`). */
	waitForDeliveries(timeoutMs?: number): Promise<void>;
	/** What the control API's GET /control/state answers. */
	state(): SimulatorState;
	/** Closes every listener and socket, stops deliveries and removes temporary files. */
	close(): Promise<void>;
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
	const temporaryDirs: string[] = [];
	const removeTemporaryDirs = () => {
		for (const dir of temporaryDirs) rmSync(dir, { recursive: true, force: true });
	};
	const caDirOption = options.caDir ?? process.env[CA_DIR_ENV];
	let ca: CertificateFiles;
	let caDir: string;
	if (caDirOption) {
		caDir = caDirOption;
		ca = findCertificateAuthority(caDir) ?? createCertificateAuthority(caDir);
	} else {
		caDir = mkdtempSync(join(tmpdir(), 'invoicing-sim-ca-'));
		temporaryDirs.push(caDir);
		ca = createCertificateAuthority(caDir);
	}
	const certDir = mkdtempSync(join(tmpdir(), 'invoicing-sim-cert-'));
	temporaryDirs.push(certDir);
	const serverCert = issueCertificate(ca, certDir, 'simulator');
	const tlsOptions = {
		key: readFileSync(serverCert.keyPath),
		cert: readFileSync(serverCert.certPath),
		minVersion: 'TLSv1.2' as const,
	};

	const clock = new SimulatorClock(options.clockOffsetMs ?? 0);
	const secretRecord = new SecretRecord();
	const clients = new ClientRegistry(clock, secretRecord);
	const tokens = new TokenStore(clock, clients, secretRecord);
	const log = new RequestLog(tokens, options.logLimit);
	const data = new DataStore({
		invoices: options.invoices,
		assets: options.assets,
		seed: options.seed ?? DEFAULT_SEED,
	});
	const subscriptions = new SubscriptionStore();
	const faults = new FaultInjector(options.seed ?? DEFAULT_SEED);
	const sleeper = new Sleeper();
	const contract = new ContractMonitor(options.checkContract ?? true);
	const deliveries = new DeliveryEngine(
		clock,
		subscriptions,
		[readFileSync(ca.certPath, 'utf8'), ...(options.trustedCaPems ?? [])],
		options.delivery,
		contract,
		(subscriptionId) => {
			const owner = subscriptions.ownerOf(subscriptionId);
			return owner !== undefined && clients.isLive(owner, clock.nowMs());
		},
	);
	const urls = { service: '' };
	const listing: {
		deviation?: ListPagingDeviation;
		commitDelayMs?: number;
		shape: ListShape;
	} = { shape: { ...CONTRACT_LIST_SHAPE } };
	let echoRequests = options.echoRequests ?? false;
	const routeContext = {
		clock,
		clients,
		tokens,
		data,
		subscriptions,
		faults,
		log,
		sleeper,
		secretRecord,
		contract,
		serviceUrl: () => urls.service,
		onRequest: options.onRequest,
		listPagingDeviation: () => listing.deviation,
		listShape: () => listing.shape,
		createCommitDelayMs: () => listing.commitDelayMs,
		echoRequests: () => echoRequests,
	};

	const sockets = new Set<Socket>();
	const track = (server: Server) => {
		server.on('connection', (socket: Socket) => {
			sockets.add(socket);
			socket.on('close', () => sockets.delete(socket));
		});
		server.keepAliveTimeout = 5000;
		server.headersTimeout = 15000;
		server.requestTimeout = 60000;
		return server;
	};
	const identityServer = track(
		createHttpsServer(tlsOptions, createRequestHandler(routeContext, 'identity')),
	);
	const serviceServer = track(
		createHttpsServer(tlsOptions, createRequestHandler(routeContext, 'service')),
	);
	for (const server of [identityServer, serviceServer]) {
		server.on('tlsClientError', (_error: Error, socket: Socket) => socket.destroy());
	}
	const controlHolder: { sim?: Simulator } = {};
	const controlServer = track(
		createHttpServer(createControlHandler(() => controlHolder.sim as Simulator)),
	);
	const servers = [identityServer, serviceServer, controlServer];

	const stopServers = async () => {
		await Promise.all(
			servers.map(
				(server) =>
					new Promise<void>((resolve) => {
						if (!server.listening) return resolve();
						server.close(() => resolve());
						server.closeAllConnections();
						for (const socket of sockets) socket.destroy();
					}),
			),
		);
		for (const socket of sockets) socket.destroy();
	};

	const fallback = options.fallbackToFreePorts ?? false;
	const started = await Promise.all([
		listen(identityServer, options.ports?.identity ?? 0, fallback),
		listen(serviceServer, options.ports?.service ?? 0, fallback),
		listen(controlServer, options.ports?.control ?? 0, fallback),
	]).then(
		(ports) => ({ ports }),
		(error: Error) => ({ error }),
	);
	if ('error' in started) {
		await stopServers();
		await deliveries.close();
		removeTemporaryDirs();
		throw started.error;
	}
	const [identityPort, servicePort, controlPort] = started.ports;
	urls.service = `https://localhost:${servicePort}`;

	const defaultClient = clients.register({
		environment: 'production',
		displayName: 'Simulator default key',
		...options.defaultClient,
	});
	const defaultSandboxClient = clients.register({
		environment: 'sandbox',
		displayName: 'Simulator default sandbox key',
	});

	let closing: Promise<void> | undefined;
	const identityUrl = `https://localhost:${identityPort}`;
	const sim: Simulator = {
		identityUrl,
		tokenUrl: `${identityUrl}${TOKEN_PATH}`,
		serviceUrl: urls.service,
		sandboxServiceUrl: `${urls.service}${SANDBOX_PATH_PREFIX}`,
		controlUrl: `http://127.0.0.1:${controlPort}`,
		caCertPath: ca.certPath,
		caDir,
		defaultClient,
		defaultSandboxClient,
		clock: {
			now: () => clock.now(),
			advance: (ms) => clock.advance(ms),
			offsetMs: () => clock.offsetMs,
		},
		registerClient: (registration) => clients.register(registration),
		updateClientSecret: (clientId, newSecret) => clients.rotateSecret(clientId, newSecret),
		deleteClient: (clientId) => {
			if (!clients.delete(clientId)) throw new Error(`Client ID '${clientId}' is not registered.`);
			return subscriptions.deleteAllOf(clientId);
		},
		data: {
			invoices: () => data.invoices,
			assets: () => data.assets,
			invoice: (invoiceNumber) => data.invoice(invoiceNumber),
			asset: (assetId) => data.asset(assetId),
			customerNumbers: () => data.customerNumbers,
			setListingLag: (lag) => data.setListingLag(lag),
		},
		seed: (seedOptions = {}) =>
			data.seed({ ...seedOptions, seed: seedOptions.seed ?? data.currentSeed }),
		issueInvoice: (input, issueOptions = {}) => {
			const invoice = data.issue(clock.now(), input);
			if (issueOptions.deviation) data.markDeviation(invoice, issueOptions.deviation);
			const event = deliveries.emit('invoice.issued', invoiceEventData(invoice), issueOptions);
			return { invoice, event };
		},
		markInvoiceOverdue: (invoiceNumber) => {
			const invoice = data.markInvoiceOverdue(invoiceNumber, clock.now());
			return { invoice, event: deliveries.emit('invoice.overdue', invoiceEventData(invoice)) };
		},
		payInvoice: (invoiceNumber) => {
			const invoice = data.payInvoice(invoiceNumber, clock.now());
			return { invoice, event: deliveries.emit('invoice.paid', invoiceEventData(invoice)) };
		},
		cancelInvoice: (invoiceNumber) => {
			const invoice = data.cancelInvoice(invoiceNumber, clock.now());
			return { invoice, event: deliveries.emit('invoice.cancelled', invoiceEventData(invoice)) };
		},
		editInvoice: (invoiceNumber, edits) => data.editInvoice(invoiceNumber, clock.now(), edits),
		updateAsset: (assetId, changes) => {
			const asset = data.updateAsset(assetId, clock.now(), changes);
			return { asset, event: deliveries.emit('asset.updated', { ...asset }) };
		},
		retireAsset: (assetId) => {
			const asset = data.retireAsset(assetId, clock.now());
			return { asset, event: deliveries.emit('asset.retired', { ...asset }) };
		},
		deleteAsset: (assetId) => data.deleteAsset(assetId),
		restamp: (kind, id, updatedAt, restampOptions = {}) => {
			const record = data.restamp(kind, id, updatedAt);
			if (restampOptions.deviation) data.markDeviation(record, restampOptions.deviation);
			return record;
		},
		emitEvent: (eventType, eventData, emitOptions) =>
			deliveries.emit(eventType, eventData, emitOptions),
		subscriptions,
		contract: {
			violations: () => contract.violations(),
			deviations: () => contract.deviations(),
			tolerate: (reason, filter) => contract.tolerate(reason, filter),
		},
		setCreateCommitDelay: (ms) => {
			if (ms !== undefined && !(Number.isFinite(ms) && ms >= 0)) {
				throw new Error('The commit delay must be a number of milliseconds of at least 0.');
			}
			listing.commitDelayMs = ms;
		},
		setListPagingDeviation: (deviation) => {
			listing.deviation = deviation === undefined ? undefined : { ...deviation };
		},
		setListShape: (shape) => {
			listing.shape = { ...CONTRACT_LIST_SHAPE, ...shape };
		},
		setEchoRequests: (on) => {
			echoRequests = on;
		},
		faults: {
			add: (rule) => faults.add(rule),
			remove: (id) => faults.remove(id),
			clear: () => faults.clear(),
			list: () => faults.list(),
		},
		log: {
			count: (route, filter) => log.count(route, filter),
			countsByRoute: () => log.countsByRoute(),
			entries: (filter) => log.entries(filter),
			tokensIssued: () => log.tokensIssued(),
			peakInFlight: (route) => log.peakInFlight(route),
			inFlight: (route) => log.open(route),
			reset: () => log.reset(),
		},
		secrets: () => secretRecord.all(),
		deliveries: {
			entries: (filter) => deliveries.entries(filter),
			options: () => deliveries.options,
			setOptions: (deliveryOptions) => deliveries.setOptions(deliveryOptions),
			inFlight: () => deliveries.pending,
			reset: () => deliveries.reset(),
		},
		waitForDeliveries: (timeoutMs) => deliveries.waitForIdle(timeoutMs),
		state: () => ({
			identityUrl: sim.identityUrl,
			tokenUrl: sim.tokenUrl,
			serviceUrl: sim.serviceUrl,
			sandboxServiceUrl: sim.sandboxServiceUrl,
			controlUrl: sim.controlUrl,
			caCertPath: sim.caCertPath,
			clock: { now: clock.now().toISOString(), offsetMs: clock.offsetMs },
			counts: {
				invoices: data.invoices.length,
				assets: data.assets.length,
				subscriptions: subscriptions.size,
				clients: clients.size,
				tokensIssued: log.tokensIssued(),
				deliveriesInFlight: deliveries.pending,
			},
			seed: data.currentSeed,
			defaultClient: clientJson(defaultClient),
			deliveryOptions: deliveries.options,
		}),
		close: () => {
			closing ??= (async () => {
				sleeper.cancelAll();
				faults.close();
				await Promise.all([stopServers(), deliveries.close()]);
				secretRecord.saveLogs({ requests: log.entries(), deliveries: deliveries.entries() });
				removeTemporaryDirs();
			})();
			return closing;
		},
	};
	controlHolder.sim = sim;
	return sim;
}

/** What an invoice event carries (assumed, as the spec's invoice.issued example suggests). */
function invoiceEventData(invoice: Invoice): Record<string, unknown> {
	return {
		invoiceNumber: invoice.invoiceNumber,
		customerNumber: invoice.customerNumber,
		status: invoice.status,
		issueDate: invoice.issueDate,
		currency: invoice.currency,
		totalAmount: invoice.totalAmount,
		assetIds: billedAssetIds(invoice),
	};
}

function listen(server: Server, port: number, fallback: boolean): Promise<number> {
	return new Promise((resolve, reject) => {
		const onListening = () => {
			server.off('error', onError);
			resolve((server.address() as AddressInfo).port);
		};
		const onError = (error: NodeJS.ErrnoException) => {
			server.off('listening', onListening);
			if (error.code === 'EADDRINUSE' && port !== 0 && fallback) {
				listen(server, 0, false).then(resolve, reject);
			} else {
				reject(error);
			}
		};
		server.once('listening', onListening);
		server.once('error', onError);
		server.listen(port, '127.0.0.1');
	});
}
