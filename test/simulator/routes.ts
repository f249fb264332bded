/**
 * Request handling of the identity service and the service API: routing (paths from the contract
 * document), fault injection, authentication, the handlers and the request log.
 *
 * Choices where the contract is silent:
 * - The sandbox service is the production service under the `/sandbox` path prefix, over the same
 *   data. Tokens of a sandbox key are refused by production (401) and the other way round.
 * - Service errors are `{ code, message, details }`: 401 `unauthorized` (details.reason says why),
 *   400 `invalid_parameter` / `invalid_json` / `invalid_notification_url` / `invalid_event_types`,
 *   404 `subscription_not_found` (a subscription unknown to the caller, as the contract assumes),
 *   404 `not_found` (an unknown path, an unknown invoice or asset), 405 `method_not_allowed` (with Allow), 406 `not_acceptable` (an Accept header
 *   that excludes JSON), 413 `payload_too_large` (over 1 MiB), 415 `unsupported_media_type`
 *   (a create body that is not JSON).
 * - Token errors are OAuth style: 400 `invalid_request` (not form-encoded, a field missing or
 *   repeated), 400 `unsupported_grant_type`, 401 `invalid_client` (unknown client ID or wrong
 *   secret; the message never repeats what was sent), 400 `key_expired`, 400 `invalid_scope`.
 *   Success: 200 `{ accessToken, tokenType: 'Bearer', expiresIn: 3600 }`.
 * - Path parameters are URL-decoded exactly once; a path that does not split into the contract's
 *   segments is an unknown route (404, logged as 'unknown'). Query filters that are empty are
 *   ignored, unknown query arguments too; a repeated argument is a 400.
 * - Lists default to page 1 and pageSize 20. A page past the end has no items.
 * - The subscription list holds the caller's subscriptions, in creation order: a bare array of
 *   them all (page arguments ignored), or under the list shape `subscriptionList: 'page envelope'`
 *   the page envelope like the other lists; the contract allows either.
 * - issuedFrom and issuedTo are inclusive bounds on issueDate; issuedFrom after issuedTo is a 400.
 *   updatedFrom and updatedTo (invoices and assets) are inclusive bounds on updatedAt, likewise.
 * - Every answer carries the simulated time in its `Date` header, as a service's answers carry
 *   its own clock's time.
 */
import { randomUUID } from 'node:crypto';

import {
	type IncomingMessage,
	performance,
	type ServerResponse,
	setTimeout,
} from '../tools/node-apis';

import {
	ASSET_STATUSES,
	EXPIRED_KEY_ERROR,
	FIRST_PAGE,
	INVALID_SCOPE_ERROR,
	INVOICE_STATUSES,
	JSON_MEDIA_TYPE,
	MAX_PAGE_SIZE,
	SUBSCRIPTION_NOT_FOUND_ERROR,
	TIMESTAMP_PATTERN,
	SERVICE_PATHS,
	subscriptionPath,
	TOKEN_PATH,
	toServiceTimestamp,
	type AssetFilters,
	type InvoiceFilters,
} from './contract';
import type { SimulatorClock } from './clock';
import type { ContractMonitor } from './contract-check';
import { isAssetStatus, isInvoiceStatus, type DataStore } from './data';
import { withRequestEcho } from './echo';
import type { FaultInjector } from './faults';
import type { OpenApiOperation } from './openapi';
import {
	defaultErrorCode,
	deviation,
	identityError,
	mediaType,
	readBody,
	serviceError,
	writeResponse,
	wireForm,
	type SimResponse,
} from './http-util';
import { formatExpiry, type ClientRegistry, type TokenStore } from './identity';
import { redactQuery, secretsOfUrl } from './redact';
import type { RequestLog } from './request-log';
import type { SecretRecord } from './secret-record';
import type { Sleeper } from './sleeper';
import { validateSubscriptionRequest, type SubscriptionStore } from './subscriptions';
import type {
	ActiveFault,
	ArrivingRequest,
	Environment,
	ListPagingDeviation,
	ListShape,
	RequestLogEntry,
	RouteName,
} from './types';

export const SANDBOX_PATH_PREFIX = '/sandbox';
export const DEFAULT_PAGE_SIZE = 20;
const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';

export interface RouteContext {
	clock: SimulatorClock;
	clients: ClientRegistry;
	tokens: TokenStore;
	data: DataStore;
	subscriptions: SubscriptionStore;
	faults: FaultInjector;
	log: RequestLog;
	sleeper: Sleeper;
	/** Validates every request and answer against the contract document. */
	contract: ContractMonitor;
	/** Where secret-hygiene runs record the delivery keys of created subscriptions. */
	secretRecord?: SecretRecord;
	/**
	 * When set, a create answers at once but the subscription exists (is listed, delivers) only
	 * this many ms later: a service that commits late (a test switch).
	 */
	createCommitDelayMs: () => number | undefined;
	/** When set, the invoice and asset lists page differently from the contract (a test switch). */
	listPagingDeviation: () => ListPagingDeviation | undefined;
	/** The lists' order, counting and the subscription list's form (test switches within the contract). */
	listShape: () => ListShape;
	/** Whether error answers quote the request back (a test switch, echo.ts). */
	echoRequests: () => boolean;
	/** The production service URL, for Location headers. */
	serviceUrl: () => string;
	/** Told of each request as it arrives (SimulatorOptions.onRequest). */
	onRequest?: (request: ArrivingRequest) => void;
}

export type Listener = 'identity' | 'service';

/* ---------------------------------------------------------------- routing */

type Pattern = { fixed: string } | { prefix: string; suffix: string; name: string };

interface RouteDefinition {
	route: RouteName;
	method: string;
	pattern: Pattern;
}

/** The pattern of a path template of the contract document, e.g. `/invoice/v1/invoices/{invoiceNumber}`. */
function templatePattern(template: string): Pattern {
	const parameter = /\{([^}/]+)\}/.exec(template);
	if (!parameter) return { fixed: template };
	return {
		prefix: template.slice(0, parameter.index),
		suffix: template.slice(parameter.index + parameter[0].length),
		name: parameter[1],
	};
}

const SERVICE_ROUTES: RouteDefinition[] = (
	[
		['subscriptions.create', 'POST'],
		['subscriptions.list', 'GET'],
		['subscriptions.delete', 'DELETE'],
		['invoices.list', 'GET'],
		['invoices.get', 'GET'],
		['assets.list', 'GET'],
		['assets.get', 'GET'],
	] as const
).map(([route, method]) => ({ route, method, pattern: templatePattern(SERVICE_PATHS[route]) }));

const IDENTITY_ROUTES: RouteDefinition[] = [
	{ route: 'token', method: 'POST', pattern: { fixed: TOKEN_PATH } },
];

type Match =
	| { kind: 'route'; route: RouteName; rawParams: Record<string, string> }
	| { kind: 'unknown'; allow: string[] };

function matchPattern(pattern: Pattern, path: string): Record<string, string> | undefined {
	if ('fixed' in pattern) return path === pattern.fixed ? {} : undefined;
	const { prefix, suffix, name } = pattern;
	if (!path.startsWith(prefix) || !path.endsWith(suffix)) return undefined;
	if (path.length <= prefix.length + suffix.length) return undefined;
	const value = path.slice(prefix.length, path.length - suffix.length);
	return value.includes('/') ? undefined : { [name]: value };
}

function matchRoute(routes: RouteDefinition[], method: string, path: string): Match {
	const allow: string[] = [];
	for (const definition of routes) {
		const rawParams = matchPattern(definition.pattern, path);
		if (!rawParams) continue;
		if (definition.method === method) return { kind: 'route', route: definition.route, rawParams };
		allow.push(definition.method);
	}
	return { kind: 'unknown', allow };
}

function splitEnvironment(path: string): { environment: Environment; path: string } {
	if (path === SANDBOX_PATH_PREFIX || path.startsWith(`${SANDBOX_PATH_PREFIX}/`)) {
		return { environment: 'sandbox', path: path.slice(SANDBOX_PATH_PREFIX.length) || '/' };
	}
	return { environment: 'production', path };
}

function decodeParams(raw: Record<string, string>): Record<string, string> | undefined {
	const decoded: Record<string, string> = {};
	for (const [name, value] of Object.entries(raw)) {
		try {
			decoded[name] = decodeURIComponent(value);
		} catch {
			return undefined;
		}
	}
	return decoded;
}

/* --------------------------------------------------------------- pipeline */

interface RequestInfo {
	clientId: string | null;
	environment: Environment | null;
}

export function createRequestHandler(ctx: RouteContext, listener: Listener) {
	return (req: IncomingMessage, res: ServerResponse) => {
		handle(ctx, listener, req, res).catch((error: unknown) => {
			writeResponse(res, internalError(listener, error));
		});
	};
}

async function handle(
	ctx: RouteContext,
	listener: Listener,
	req: IncomingMessage,
	res: ServerResponse,
) {
	const started = performance.now();
	const at = ctx.clock.timestamp();
	const method = (req.method ?? 'GET').toUpperCase();
	const rawUrl = req.url ?? '/';
	const queryAt = rawUrl.indexOf('?');
	const fullPath = queryAt === -1 ? rawUrl : rawUrl.slice(0, queryAt);
	const search = new URLSearchParams(queryAt === -1 ? '' : rawUrl.slice(queryAt + 1));

	let environment: Environment | null = null;
	let match: Match;
	let contractPath = fullPath;
	if (listener === 'identity') {
		match = matchRoute(IDENTITY_ROUTES, method, fullPath);
	} else {
		const split = splitEnvironment(fullPath);
		environment = split.environment;
		contractPath = split.path;
		match = matchRoute(SERVICE_ROUTES, method, split.path);
	}
	const params = match.kind === 'route' ? decodeParams(match.rawParams) : {};
	const info: RequestInfo = { clientId: null, environment };
	const entry: Omit<RequestLogEntry, 'seq'> = {
		at,
		receivedAtMs: performance.timeOrigin + started,
		remotePort: req.socket.remotePort ?? null,
		route: match.kind === 'route' ? match.route : 'unknown',
		method,
		path: fullPath,
		params: params ?? {},
		query: redactQuery(search),
		status: null,
		errorCode: null,
		clientId: null,
		environment,
		fault: null,
		durationMs: 0,
	};
	ctx.log.begin(entry.route);
	const received = { server: listener, method, path: contractPath };
	let operation: OpenApiOperation | undefined;
	ctx.onRequest?.({ route: entry.route, method, remotePort: entry.remotePort });
	let requestBody: Buffer | undefined;
	const finish = (answer: SimResponse | null) => {
		const echoed =
			answer && ctx.echoRequests()
				? withRequestEcho(
						answer,
						{ method, url: rawUrl, headers: req.headers, body: requestBody },
						listener,
						ctx.secretRecord,
					)
				: answer;
		const response = echoed && {
			...echoed,
			headers: { date: ctx.clock.now().toUTCString(), ...echoed.headers },
		};
		if (response) {
			writeResponse(res, response);
			if (entry.fault !== 'status') {
				const { headers } = wireForm(response);
				ctx.contract.checkAnswer(received, operation, { ...response, headers }, response.deviation);
			}
		}
		entry.status = response ? response.status : null;
		entry.errorCode = response ? errorCodeOf(response) : null;
		if (response?.deviation) entry.deviation = response.deviation;
		entry.clientId = info.clientId;
		entry.environment = info.environment;
		entry.durationMs = Math.round((performance.now() - started) * 10) / 10;
		ctx.log.add(entry);
	};

	const body = await readBody(req);
	if (body.ok) requestBody = body.body;
	if (!(!body.ok && body.reason === 'aborted')) {
		operation = ctx.contract.checkRequest({
			...received,
			search,
			headers: req.headers,
			body: body.ok ? body.body : undefined,
		});
	}
	if (!body.ok) {
		if (body.reason === 'aborted') return finish(null);
		res.shouldKeepAlive = false;
		return finish(
			listener === 'identity'
				? identityError(413, 'invalid_request', 'The request body is larger than 1 MiB.')
				: serviceError(413, 'payload_too_large', 'The request body is larger than 1 MiB.'),
		);
	}

	if (match.kind === 'unknown') return finish(unknownRoute(listener, method, match.allow));

	const fault = ctx.faults.take(match.route, method);
	const lateFault = fault?.afterHandling ? fault : undefined;
	if (fault && !lateFault) {
		if (fault.hold) {
			entry.fault = 'hold';
			if (!(await ctx.faults.hold(fault.id))) {
				req.socket.destroy();
				return finish(null);
			}
		}
		if (fault.latencyMs !== undefined) {
			entry.fault = 'latency';
			if (!(await ctx.sleeper.sleep(fault.latencyMs))) {
				req.socket.destroy();
				return finish(null);
			}
		}
		if (fault.drop) {
			entry.fault = 'drop';
			req.socket.destroy();
			return finish(null);
		}
		if (fault.status !== undefined) {
			entry.fault = 'status';
			return finish(faultResponse(listener, fault));
		}
	}

	const answer = withRecordDeviation(
		ctx.data,
		respond(ctx, match.route, params, search, req, body.body, info, environment),
	);
	if (lateFault) {
		// The service did the work; the answer is lost or replaced on its way back.
		const goesOn =
			(!lateFault.hold || (await ctx.faults.hold(lateFault.id))) &&
			(lateFault.latencyMs === undefined || (await ctx.sleeper.sleep(lateFault.latencyMs)));
		if (!goesOn) {
			req.socket.destroy();
			return finish(null);
		}
		if (lateFault.drop) {
			entry.fault = 'drop';
			req.socket.destroy();
			return finish(null);
		}
		if (lateFault.status === undefined) {
			entry.fault = lateFault.latencyMs === undefined ? 'hold' : 'latency';
			return finish(answer);
		}
		entry.fault = 'status';
		return finish(faultResponse(listener, lateFault));
	}
	return finish(answer);
}

/** An answer that carries a record marked as a deliberate deviation is marked too. */
function withRecordDeviation(data: DataStore, answer: SimResponse): SimResponse {
	const body = answer.body as { items?: unknown } | undefined;
	const records = Array.isArray(body?.items) ? body.items : [body];
	for (const record of records) {
		const reason = data.deviationOf(record);
		if (reason) return deviation(answer, reason);
	}
	return answer;
}

function respond(
	ctx: RouteContext,
	route: RouteName,
	params: Record<string, string> | undefined,
	search: URLSearchParams,
	req: IncomingMessage,
	body: Buffer,
	info: RequestInfo,
	environment: Environment | null,
): SimResponse {
	if (!params) {
		return serviceError(
			400,
			'invalid_path',
			'A path parameter is not valid percent-encoding.',
			null,
		);
	}
	if (route === 'token') return handleToken(ctx, req, body, info);

	if (!acceptsJson(req.headers.accept)) {
		return serviceError(
			406,
			'not_acceptable',
			`This service only answers ${JSON_MEDIA_TYPE}.`,
			null,
		);
	}
	const auth = authenticate(ctx, req.headers.authorization, environment ?? 'production', info);
	if (auth) return auth;
	return handleService(ctx, route, params, search, req, body, info.clientId as string);
}

/* ------------------------------------------------------------------ token */

function handleToken(
	ctx: RouteContext,
	req: IncomingMessage,
	body: Buffer,
	info: RequestInfo,
): SimResponse {
	if (mediaType(req.headers['content-type']) !== FORM_MEDIA_TYPE) {
		return identityError(
			400,
			'invalid_request',
			`The token request must be form-encoded (Content-Type: ${FORM_MEDIA_TYPE}).`,
		);
	}
	const form = new URLSearchParams(body.toString('utf8'));
	for (const name of ['grant_type', 'scope', 'client_id', 'client_secret']) {
		if (form.getAll(name).length > 1) {
			return identityError(
				400,
				'invalid_request',
				`The parameter '${name}' is given more than once.`,
			);
		}
	}
	const grantType = form.get('grant_type');
	if (!grantType) {
		return identityError(
			400,
			'invalid_request',
			"The request is missing the 'grant_type' parameter.",
		);
	}
	if (grantType !== 'client_credentials') {
		return identityError(
			400,
			'unsupported_grant_type',
			'Only the client_credentials grant type is supported (grant_type=client_credentials).',
		);
	}
	const clientId = form.get('client_id');
	const clientSecret = form.get('client_secret');
	const scope = form.get('scope');
	for (const [name, value] of [
		['client_id', clientId],
		['client_secret', clientSecret],
		['scope', scope],
	] as const) {
		if (!value) {
			return identityError(
				400,
				'invalid_request',
				`The request is missing the '${name}' parameter.`,
			);
		}
	}
	const check = ctx.clients.authenticate(clientId as string, clientSecret as string);
	if (!check.ok) {
		return identityError(
			401,
			'invalid_client',
			check.reason === 'unknown_client'
				? 'Client authentication failed: no API key with this client ID exists in the identity service. Check the Client ID, and that the key belongs to this environment.'
				: 'Client authentication failed: the client secret is not valid for this client ID. If the secret was replaced, use the new one.',
		);
	}
	const client = check.client;
	info.clientId = client.clientId;
	info.environment = client.environment;
	if (ctx.clients.isKeyExpired(client, ctx.clock.nowMs())) {
		return identityError(
			400,
			EXPIRED_KEY_ERROR,
			`The API key expired on ${formatExpiry(client.keyExpiresAt)}. An expired key cannot be extended or revived; create a new API key in the identity portal.`,
		);
	}
	if (scope !== client.scope) {
		return identityError(
			400,
			INVALID_SCOPE_ERROR,
			'The requested scope is not valid for this client. Use the API resource identifier given by the identity portal, ending in /.default.',
		);
	}
	const token = ctx.tokens.issue(client);
	return {
		status: 200,
		body: { accessToken: token.accessToken, tokenType: 'Bearer', expiresIn: token.expiresIn },
		headers: { 'cache-control': 'no-store', pragma: 'no-cache' },
	};
}

/* ---------------------------------------------------------------- service */

function authenticate(
	ctx: RouteContext,
	header: string | undefined,
	environment: Environment,
	info: RequestInfo,
): SimResponse | undefined {
	const bearer = /^Bearer +(\S+) *$/i.exec(header ?? '');
	if (!bearer) {
		return serviceError(
			401,
			'unauthorized',
			'The request has no bearer access token. Send the header Authorization: Bearer <accessToken>.',
			{ reason: 'missing_token' },
			{ 'www-authenticate': 'Bearer realm="invoicing-assets"' },
		);
	}
	const check = ctx.tokens.check(bearer[1], environment);
	info.clientId = check.clientId;
	if (check.ok) return undefined;
	return serviceError(
		401,
		'unauthorized',
		check.message,
		{ reason: check.reason },
		{ 'www-authenticate': 'Bearer realm="invoicing-assets", error="invalid_token"' },
	);
}

function handleService(
	ctx: RouteContext,
	route: RouteName,
	params: Record<string, string>,
	search: URLSearchParams,
	req: IncomingMessage,
	body: Buffer,
	clientId: string,
): SimResponse {
	switch (route) {
		case 'subscriptions.create':
			return createSubscription(ctx, req, body, clientId);
		case 'subscriptions.list':
			return listSubscriptions(ctx, search, clientId);
		case 'subscriptions.delete':
			return ctx.subscriptions.delete(params.id, clientId)
				? { status: 204 }
				: serviceError(
						404,
						SUBSCRIPTION_NOT_FOUND_ERROR,
						`Subscription '${params.id}' was not found.`,
					);
		case 'invoices.get': {
			const invoice = ctx.data.invoice(params.invoiceNumber);
			return invoice
				? { status: 200, body: invoice }
				: serviceError(404, 'not_found', `Invoice '${params.invoiceNumber}' was not found.`);
		}
		case 'assets.get': {
			const asset = ctx.data.asset(params.assetId);
			return asset
				? { status: 200, body: asset }
				: serviceError(404, 'not_found', `Asset '${params.assetId}' was not found.`);
		}
		case 'invoices.list':
		case 'assets.list':
			return answerList(ctx, route, search, ctx.clock.nowMs());
		default:
			return serviceError(404, 'not_found', 'No such endpoint.');
	}
}

/** What the invoice and asset lists answer from: the records and the lists' test switches. */
export type ListSource = Pick<RouteContext, 'data' | 'listShape' | 'listPagingDeviation'>;

/**
 * The invoice or asset list's answer to a query at the service's time `nowMs` (a change listed
 * late is not listed before its time): the simulator's, and the in-memory service's (in-memory.ts).
 */
export function answerList(
	lists: ListSource,
	route: 'invoices.list' | 'assets.list',
	search: URLSearchParams,
	nowMs: number,
): SimResponse {
	if (route === 'invoices.list') {
		const query = readListQuery(search, INVOICE_FILTERS);
		if ('status' in query) return query;
		const filters = query.filters as InvoiceFilters;
		const bad = checkInvoiceFilters(filters);
		if (bad) return bad;
		return deviatingList(lists, query, (page, pageSize) =>
			lists.data.listInvoices(filters, page, pageSize, lists.listShape().order, nowMs),
		);
	}
	const query = readListQuery(search, ASSET_FILTERS);
	if ('status' in query) return query;
	const filters = query.filters as AssetFilters;
	if (filters.status !== undefined && !isAssetStatus(filters.status)) {
		return invalidParameter('status', `must be one of ${ASSET_STATUSES.join(', ')}`);
	}
	const badRange = checkTimeRange({ ...filters }, 'updatedFrom', 'updatedTo');
	if (badRange) return badRange;
	return deviatingList(lists, query, (page, pageSize) =>
		lists.data.listAssets(filters, page, pageSize, lists.listShape().order, nowMs),
	);
}

/**
 * A page of the invoice or asset list: as the contract says, or under a deliberate deviation
 * (ListPagingDeviation), marked as such with `deviation` so that contract validation can exempt it.
 */
function deviatingList(
	ctx: Pick<RouteContext, 'listShape' | 'listPagingDeviation'>,
	query: { page: number; pageSize: number },
	list: (page: number, pageSize: number) => { items: unknown[]; totalItems: number | null },
): SimResponse {
	const deviation = ctx.listPagingDeviation();
	const counted = ctx.listShape().totalItems === 'counted';
	if (!deviation) {
		const answer = list(query.page, query.pageSize);
		return { status: 200, body: counted ? answer : { ...answer, totalItems: null } };
	}
	if (deviation.mode === 'ignore-paging') {
		const whole = list(FIRST_PAGE, Number.MAX_SAFE_INTEGER);
		return {
			status: 200,
			body: { items: whole.items, page: null, pageSize: null, totalItems: null },
			deviation: 'list-ignores-paging',
		};
	}
	if (deviation.mode === 'max-page-size') {
		const pageSize = Math.min(query.pageSize, deviation.maxPageSize);
		const answer = list(query.page, pageSize);
		return {
			status: 200,
			body: {
				...answer,
				page: query.page,
				pageSize,
				totalItems: counted ? answer.totalItems : null,
			},
			deviation: `list-max-page-size-${deviation.maxPageSize}`,
		};
	}
	const first = list(FIRST_PAGE, query.pageSize);
	return {
		status: 200,
		body: {
			items: first.items,
			page: query.page,
			pageSize: query.pageSize,
			totalItems: deviation.totalItems === 'reported' ? first.totalItems : null,
		},
		deviation: `list-ignores-page-total-${deviation.totalItems}`,
	};
}

/**
 * The caller's subscriptions in the list shape's form: a bare array of them all (`page` and
 * `pageSize` ignored), or the page envelope, paged and counted like the other lists.
 */
function listSubscriptions(
	ctx: RouteContext,
	search: URLSearchParams,
	clientId: string,
): SimResponse {
	const subscriptions = ctx.subscriptions.list(clientId);
	const shape = ctx.listShape();
	if (shape.subscriptionList === 'bare array') return { status: 200, body: subscriptions };
	const query = readListQuery(search, []);
	if ('status' in query) return query;
	const { page, pageSize } = query;
	const items = subscriptions.slice((page - FIRST_PAGE) * pageSize, page * pageSize);
	const totalItems = shape.totalItems === 'counted' ? subscriptions.length : null;
	return { status: 200, body: { items, page, pageSize, totalItems } };
}

function createSubscription(
	ctx: RouteContext,
	req: IncomingMessage,
	body: Buffer,
	clientId: string,
): SimResponse {
	if (mediaType(req.headers['content-type']) !== JSON_MEDIA_TYPE) {
		return serviceError(
			415,
			'unsupported_media_type',
			`The request body must be JSON (Content-Type: ${JSON_MEDIA_TYPE}).`,
		);
	}
	const parsed = parseJson(body);
	if (!parsed.ok) return serviceError(400, 'invalid_json', 'The request body is not valid JSON.');
	const validation = validateSubscriptionRequest(parsed.value);
	if (!validation.ok) {
		return serviceError(400, validation.code, validation.message, validation.details);
	}
	for (const secret of secretsOfUrl(validation.value.notificationUrl)) {
		ctx.secretRecord?.note('deliveryKey', secret);
	}
	const commitDelayMs = ctx.createCommitDelayMs();
	const id = randomUUID();
	const commit = () =>
		ctx.subscriptions.create(validation.value, ctx.clock.timestamp(), clientId, id);
	if (commitDelayMs === undefined) commit();
	else setTimeout(commit, commitDelayMs).unref();
	const subscription = { id };
	return {
		status: 201,
		body: subscription.id,
		headers: { location: `${ctx.serviceUrl()}${subscriptionPath(subscription.id)}` },
	};
}

/* ------------------------------------------------------------------ lists */

const INVOICE_FILTERS = Object.keys({
	issuedFrom: true,
	issuedTo: true,
	updatedFrom: true,
	updatedTo: true,
	status: true,
	customerNumber: true,
} satisfies Record<keyof InvoiceFilters, true>);

const ASSET_FILTERS = Object.keys({
	status: true,
	type: true,
	site: true,
	customerNumber: true,
	serialNumber: true,
	updatedFrom: true,
	updatedTo: true,
} satisfies Record<keyof AssetFilters, true>);

function readListQuery(
	search: URLSearchParams,
	filterNames: string[],
	defaultPageSize = DEFAULT_PAGE_SIZE,
): { page: number; pageSize: number; filters: Record<string, string> } | SimResponse {
	for (const name of ['page', 'pageSize', ...filterNames]) {
		if (search.getAll(name).length > 1) {
			return invalidParameter(name, 'is given more than once');
		}
	}
	const page = readWholeNumber(search.get('page'), FIRST_PAGE);
	if (page === undefined || page < FIRST_PAGE) {
		return invalidParameter('page', `must be a whole number of at least ${FIRST_PAGE}`);
	}
	const pageSize = readWholeNumber(search.get('pageSize'), defaultPageSize);
	if (pageSize === undefined || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
		return invalidParameter('pageSize', `must be a whole number from 1 to ${MAX_PAGE_SIZE}`);
	}
	const filters: Record<string, string> = {};
	for (const name of filterNames) {
		const value = search.get(name);
		if (value !== null && value !== '') filters[name] = value;
	}
	return { page, pageSize, filters };
}

/** A pair of inclusive timestamp bounds: each a service timestamp, the first not after the second. */
function checkTimeRange(
	filters: Record<string, string | undefined>,
	from: string,
	to: string,
): SimResponse | undefined {
	for (const name of [from, to]) {
		const value = filters[name];
		if (value !== undefined && !isServiceTimestamp(value)) {
			return invalidParameter(name, 'must be a UTC timestamp in the form YYYY-MM-DDTHH:MM:SSZ');
		}
	}
	const [first, last] = [filters[from], filters[to]];
	if (first && last && first > last) return invalidParameter(from, `must not be later than ${to}`);
	return undefined;
}

function checkInvoiceFilters(filters: InvoiceFilters): SimResponse | undefined {
	const badRange =
		checkTimeRange({ ...filters }, 'issuedFrom', 'issuedTo') ??
		checkTimeRange({ ...filters }, 'updatedFrom', 'updatedTo');
	if (badRange) return badRange;
	if (filters.status !== undefined && !isInvoiceStatus(filters.status)) {
		return invalidParameter('status', `must be one of ${INVOICE_STATUSES.join(', ')}`);
	}
	return undefined;
}

function invalidParameter(name: string, rule: string): SimResponse {
	return serviceError(400, 'invalid_parameter', `The query parameter '${name}' ${rule}.`, {
		parameter: name,
	});
}

function readWholeNumber(value: string | null, fallback: number): number | undefined {
	if (value === null || value === '') return fallback;
	if (!/^\d{1,15}$/.test(value)) return undefined;
	return Number(value);
}

/** `YYYY-MM-DDTHH:MM:SSZ` and a real moment (no 30 February). */
function isServiceTimestamp(value: string): boolean {
	if (!TIMESTAMP_PATTERN.test(value)) return false;
	const time = Date.parse(value);
	return !Number.isNaN(time) && toServiceTimestamp(new Date(time)) === value;
}

/* ---------------------------------------------------------------- helpers */

function acceptsJson(accept: string | undefined): boolean {
	if (accept === undefined || accept.trim() === '') return true;
	return accept
		.split(',')
		.map((part) => part.split(';')[0].trim().toLowerCase())
		.some((type) => type === JSON_MEDIA_TYPE || type === 'application/*' || type === '*/*');
}

function parseJson(body: Buffer): { ok: true; value: unknown } | { ok: false } {
	try {
		return { ok: true, value: JSON.parse(body.toString('utf8')) };
	} catch {
		return { ok: false };
	}
}

function unknownRoute(listener: Listener, method: string, allow: string[]): SimResponse {
	if (allow.length > 0) {
		const headers = { allow: allow.join(', ') };
		const message = `Method ${method} is not allowed here; use ${allow.join(' or ')}.`;
		return listener === 'identity'
			? { ...identityError(405, 'invalid_request', message), headers }
			: serviceError(405, 'method_not_allowed', message, null, headers);
	}
	return listener === 'identity'
		? identityError(404, 'not_found', 'No such endpoint on the identity service.')
		: serviceError(404, 'not_found', 'No such endpoint.');
}

/** The answer of a fault with a status (a route-style error body unless the fault gives one). */
export function faultResponse(listener: Listener, fault: ActiveFault): SimResponse {
	const status = fault.status as number;
	const headers: Record<string, string> = { ...(fault.headers ?? {}) };
	if (fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
	if (typeof fault.body === 'string') return { status, raw: fault.body, headers };
	if (fault.body !== undefined) return { status, body: fault.body, headers };
	const message = `Simulated ${status} response (fault injection).`;
	const body =
		listener === 'identity'
			? {
					error: status >= 500 ? 'temporarily_unavailable' : defaultErrorCode(status),
					error_description: message,
				}
			: { code: defaultErrorCode(status), message, details: null };
	return { status, body, headers };
}

function internalError(listener: Listener, error: unknown): SimResponse {
	const message = `Simulator error: ${error instanceof Error ? error.message : String(error)}`;
	return listener === 'identity'
		? identityError(500, 'server_error', message)
		: serviceError(500, 'internal_error', message);
}

function errorCodeOf(response: SimResponse): string | null {
	if (response.status < 400 || typeof response.body !== 'object' || response.body === null) {
		return null;
	}
	const body = response.body as Record<string, unknown>;
	const code = body.code ?? body.error;
	return typeof code === 'string' ? code : null;
}
