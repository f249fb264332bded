/**
 * The control API: plain HTTP JSON on 127.0.0.1, on its own port, apart from the service API.
 * It maps to the Simulator's functions so that another process (an n8n end-to-end test, the
 * demo) can drive the simulator. See control-client.ts for a typed client.
 *
 *   GET    /control/state                     urls, CA file, counts, default client, options
 *   POST   /control/clients                   ClientRegistrationJson -> 201 ClientRecordJson
 *   POST   /control/clients/:id/secret        { clientSecret? } -> ClientRecordJson
 *   DELETE /control/clients/:id               the key deleted in the portal -> { endedSubscriptions }
 *   GET    /control/clock                     { now, offsetMs }
 *   POST   /control/clock/advance             { seconds } -> { now, offsetMs }
 *   GET    /control/faults                    ActiveFault[]
 *   POST   /control/faults                    FaultRule -> 201 ActiveFault
 *   DELETE /control/faults                    remove all -> 204
 *   DELETE /control/faults/:id                -> 204 | 404
 *   GET    /control/log?route=&method=&status=&clientId=&environment=
 *                                             { counts, tokensIssued, entries }
 *   DELETE /control/log                       -> 204
 *   GET    /control/subscriptions             Subscription[]
 *   DELETE /control/subscriptions/:id         out-of-band delete -> 204 | 404
 *   POST   /control/invoices                  { invoice?, waitForDelivery? } -> 201 { invoice, event }
 *   POST   /control/events                    { eventType, data?, waitForDelivery?, deviation? } -> 201 EmittedEventJson
 *   GET    /control/contract                  { violations, deviations } of the contract check
 *   POST   /control/invoices/:number/pay      { waitForDelivery? } -> { invoice, event } (also /cancel,
 *                                             /mark-overdue)
 *   POST   /control/invoices/:number/edit     { edits? } -> { invoice } (no event)
 *   POST   /control/assets/:id/update         { changes?, waitForDelivery? } -> { asset, event }
 *   POST   /control/assets/:id/retire         { waitForDelivery? } -> { asset, event }
 *   POST   /control/invoices/:number/restamp  { updatedAt, deviation? } -> { invoice } (also assets)
 *   POST   /control/lists                     Partial<ListShape> (order, totalItems,
 *                                               subscriptionList) -> 204
 *   POST   /control/echo                      { requests: boolean }: error answers quote the request -> 204
 *   GET    /control/deliveries?eventId=&subscriptionId=   { inFlight, options, entries }
 *   DELETE /control/deliveries                clear the attempts log -> 204
 *   POST   /control/deliveries/options        Partial<DeliveryOptions> -> DeliveryOptions
 *   POST   /control/deliveries/wait           { timeoutMs? } -> 204 once none is in flight
 *   POST   /control/seed                      { invoices?, assets?, seed? } -> counts
 *   POST   /control/deviations                { listPaging?: ListPagingDeviation | null,
 *                                               createCommitDelayMs?: number | null } -> 204
 *                                             (test switches; null restores the contract)
 * Errors: `{ code, message, details }` with 400 (bad input) or 404.
 */
import type { IncomingMessage, ServerResponse } from '../tools/node-apis';

import type { AssetChanges, InvoiceEdits } from './data';
import { clientJson } from './identity';
import { readBody, serviceError, writeResponse, type SimResponse } from './http-util';
import type { Simulator } from './index';
import {
	ENVIRONMENTS,
	ROUTES,
	SUBSCRIPTION_LIST_FORMS,
	type ClientRegistrationJson,
	type ClockState,
	type EmittedEvent,
	type EmittedEventJson,
	type Environment,
	type FaultRule,
	type ListPagingDeviation,
	type ListShape,
	type LoggedRoute,
	type RequestLogFilter,
} from './types';

export const CONTROL_PREFIX = '/control';

export function createControlHandler(getSimulator: () => Simulator | undefined) {
	return (req: IncomingMessage, res: ServerResponse) => {
		const sim = getSimulator();
		if (!sim) {
			writeResponse(res, serviceError(503, 'starting', 'The simulator is starting.'));
			return;
		}
		handleControl(sim, req).then(
			(response) => writeResponse(res, response),
			(error: unknown) =>
				writeResponse(
					res,
					serviceError(400, 'bad_request', error instanceof Error ? error.message : String(error)),
				),
		);
	};
}

async function handleControl(sim: Simulator, req: IncomingMessage): Promise<SimResponse> {
	const method = (req.method ?? 'GET').toUpperCase();
	const url = new URL(req.url ?? '/', 'http://control');
	const segments = url.pathname
		.split('/')
		.filter((segment) => segment !== '')
		.map((segment) => decodeURIComponent(segment));
	if (segments[0] !== CONTROL_PREFIX.slice(1)) return notFound();
	const [resource, id, action] = segments.slice(1);
	const bodyResult = await readBody(req);
	if (!bodyResult.ok)
		return serviceError(400, 'bad_request', 'The request body could not be read.');
	const text = bodyResult.body.toString('utf8').trim();
	const body = (text === '' ? {} : JSON.parse(text)) as Record<string, unknown>;
	const query = url.searchParams;

	switch (
		`${method} ${resource ?? ''}${id !== undefined ? '/:id' : ''}${action ? `/${action}` : ''}`
	) {
		case 'GET state':
			return ok(sim.state());

		case 'POST clients':
			return { status: 201, body: clientJson(sim.registerClient(readRegistration(body))) };
		case 'POST clients/:id/secret':
			return ok(
				clientJson(sim.updateClientSecret(id, optionalString(body.clientSecret, 'clientSecret'))),
			);

		case 'DELETE clients/:id':
			return ok({ endedSubscriptions: sim.deleteClient(id) });

		case 'GET clock':
			return ok(clockOf(sim));
		case 'POST clock/:id':
			if (id !== 'advance') return notFound();
			if (typeof body.seconds !== 'number' || !(body.seconds >= 0)) {
				return serviceError(400, 'bad_request', 'seconds must be a number of at least 0.');
			}
			sim.clock.advance(body.seconds * 1000);
			return ok(clockOf(sim));

		case 'GET faults':
			return ok(sim.faults.list());
		case 'POST faults':
			return { status: 201, body: sim.faults.add(body as unknown as FaultRule) };
		case 'DELETE faults':
			sim.faults.clear();
			return { status: 204 };
		case 'DELETE faults/:id':
			return sim.faults.remove(id) ? { status: 204 } : notFound(`Fault '${id}' was not found.`);

		case 'GET log': {
			const filter = readLogFilter(query);
			return ok({
				counts: sim.log.countsByRoute(),
				tokensIssued: sim.log.tokensIssued(),
				entries: sim.log.entries(filter),
			});
		}
		case 'DELETE log':
			sim.log.reset();
			return { status: 204 };

		case 'GET subscriptions':
			return ok(sim.subscriptions.list());
		case 'DELETE subscriptions/:id':
			return sim.subscriptions.delete(id)
				? { status: 204 }
				: notFound(`Subscription '${id}' was not found.`);

		case 'POST invoices': {
			const issued = sim.issueInvoice(
				(body.invoice ?? {}) as Parameters<Simulator['issueInvoice']>[0],
			);
			return {
				status: 201,
				body: {
					invoice: issued.invoice,
					event: await eventJson(issued.event, body.waitForDelivery === true),
				},
			};
		}
		case 'POST invoices/:id/pay':
		case 'POST invoices/:id/cancel':
		case 'POST invoices/:id/mark-overdue': {
			const changed =
				action === 'pay'
					? sim.payInvoice(id)
					: action === 'cancel'
						? sim.cancelInvoice(id)
						: sim.markInvoiceOverdue(id);
			return ok({
				invoice: changed.invoice,
				event: await eventJson(changed.event, body.waitForDelivery === true),
			});
		}
		case 'POST invoices/:id/edit':
			return ok({ invoice: sim.editInvoice(id, (body.edits ?? {}) as InvoiceEdits) });
		case 'POST invoices/:id/restamp':
		case 'POST assets/:id/restamp': {
			if (typeof body.updatedAt !== 'string') throw new Error('updatedAt must be a string.');
			const record = sim.restamp(
				resource === 'invoices' ? 'invoice' : 'asset',
				id,
				body.updatedAt,
				{
					deviation: optionalString(body.deviation, 'deviation'),
				},
			);
			return ok(resource === 'invoices' ? { invoice: record } : { asset: record });
		}
		case 'POST lists':
			sim.setListShape(readListShape(body));
			return { status: 204 };
		case 'POST echo':
			if (typeof body.requests !== 'boolean') {
				return serviceError(400, 'bad_request', 'requests must be true or false.');
			}
			sim.setEchoRequests(body.requests);
			return { status: 204 };
		case 'POST assets/:id/update':
		case 'POST assets/:id/retire': {
			const changed =
				action === 'retire'
					? sim.retireAsset(id)
					: sim.updateAsset(id, (body.changes ?? {}) as AssetChanges);
			return ok({
				asset: changed.asset,
				event: await eventJson(changed.event, body.waitForDelivery === true),
			});
		}
		case 'POST events': {
			if (typeof body.eventType !== 'string') {
				return serviceError(400, 'bad_request', 'eventType must be a string.');
			}
			const event = sim.emitEvent(body.eventType, (body.data ?? {}) as Record<string, unknown>, {
				deviation: optionalString(body.deviation, 'deviation'),
			});
			return { status: 201, body: await eventJson(event, body.waitForDelivery === true) };
		}

		case 'GET contract':
			return ok({ violations: sim.contract.violations(), deviations: sim.contract.deviations() });

		case 'GET deliveries':
			return ok({
				inFlight: sim.deliveries.inFlight(),
				options: sim.deliveries.options(),
				entries: sim.deliveries.entries({
					eventId: query.get('eventId') ?? undefined,
					subscriptionId: query.get('subscriptionId') ?? undefined,
				}),
			});
		case 'DELETE deliveries':
			sim.deliveries.reset();
			return { status: 204 };
		case 'POST deliveries/:id':
			if (id === 'options') return ok(sim.deliveries.setOptions(body));
			if (id === 'wait') {
				await sim.waitForDeliveries(
					typeof body.timeoutMs === 'number' ? body.timeoutMs : undefined,
				);
				return { status: 204 };
			}
			return notFound();

		case 'POST deviations':
			if ('listPaging' in body) {
				sim.setListPagingDeviation(readListPaging(body.listPaging));
			}
			if ('createCommitDelayMs' in body) {
				sim.setCreateCommitDelay(
					body.createCommitDelayMs === null
						? undefined
						: optionalNumber(body.createCommitDelayMs, 'createCommitDelayMs'),
				);
			}
			return { status: 204 };

		case 'POST seed':
			return ok(
				sim.seed({
					invoices: optionalNumber(body.invoices, 'invoices'),
					assets: optionalNumber(body.assets, 'assets'),
					seed: body.seed as number | string | undefined,
				}),
			);

		default:
			return notFound();
	}
}

function clockOf(sim: Simulator): ClockState {
	return { now: sim.clock.now().toISOString(), offsetMs: sim.clock.offsetMs() };
}

async function eventJson(event: EmittedEvent, wait: boolean): Promise<EmittedEventJson> {
	const json: EmittedEventJson = {
		eventId: event.eventId,
		eventType: event.eventType,
		occurredAt: event.occurredAt,
		data: event.data,
		subscriptionIds: event.deliveries.map((delivery) => delivery.subscriptionId),
	};
	if (wait) json.outcomes = await event.done;
	return json;
}

function readRegistration(body: Record<string, unknown>) {
	const registration = body as unknown as ClientRegistrationJson;
	if (!ENVIRONMENTS.includes(registration.environment)) {
		throw new Error(`environment must be one of ${ENVIRONMENTS.join(', ')}.`);
	}
	let keyExpiresAt: Date | undefined;
	if (registration.keyExpiresAt !== undefined) {
		keyExpiresAt = new Date(registration.keyExpiresAt);
		if (Number.isNaN(keyExpiresAt.getTime()))
			throw new Error('keyExpiresAt must be an ISO 8601 date.');
	}
	return {
		clientId: optionalString(registration.clientId, 'clientId'),
		clientSecret: optionalString(registration.clientSecret, 'clientSecret'),
		scope: optionalString(registration.scope, 'scope'),
		displayName: optionalString(registration.displayName, 'displayName'),
		environment: registration.environment,
		keyExpiresAt,
	};
}

function readLogFilter(query: URLSearchParams): RequestLogFilter {
	const filter: RequestLogFilter = {};
	const route = query.get('route');
	if (route !== null) {
		if (route !== 'unknown' && !(ROUTES as readonly string[]).includes(route)) {
			throw new Error(`route must be one of ${ROUTES.join(', ')}, unknown.`);
		}
		filter.route = route as LoggedRoute;
	}
	const method = query.get('method');
	if (method !== null) filter.method = method;
	const status = query.get('status');
	if (status !== null) filter.status = Number(status);
	const clientId = query.get('clientId');
	if (clientId !== null) filter.clientId = clientId;
	const environment = query.get('environment');
	if (environment !== null) filter.environment = environment as Environment;
	return filter;
}

function readListPaging(value: unknown): ListPagingDeviation | undefined {
	if (value === null || value === undefined) return undefined;
	const deviation = value as Record<string, unknown>;
	if (deviation.mode === 'ignore-paging') return { mode: 'ignore-paging' };
	if (
		deviation.mode === 'max-page-size' &&
		Number.isInteger(deviation.maxPageSize) &&
		(deviation.maxPageSize as number) >= 1
	) {
		return { mode: 'max-page-size', maxPageSize: deviation.maxPageSize as number };
	}
	if (
		deviation.mode === 'ignore-page' &&
		(deviation.totalItems === 'reported' || deviation.totalItems === 'null')
	) {
		return { mode: 'ignore-page', totalItems: deviation.totalItems };
	}
	throw new Error(
		"listPaging must be null, { mode: 'ignore-paging' }, { mode: 'ignore-page', totalItems: 'reported' | 'null' } or { mode: 'max-page-size', maxPageSize: <whole number ≥ 1> }.",
	);
}

function readListShape(body: Record<string, unknown>): Partial<ListShape> {
	const shape: Partial<ListShape> = {};
	if (body.order !== undefined) {
		if (!['id', 'updatedAt', 'updatedAt-desc'].includes(body.order as string)) {
			throw new Error("order must be 'id', 'updatedAt' or 'updatedAt-desc'.");
		}
		shape.order = body.order as ListShape['order'];
	}
	if (body.totalItems !== undefined) {
		if (body.totalItems !== 'counted' && body.totalItems !== 'null') {
			throw new Error("totalItems must be 'counted' or 'null'.");
		}
		shape.totalItems = body.totalItems;
	}
	if (body.subscriptionList !== undefined) {
		const form = SUBSCRIPTION_LIST_FORMS.find((entry) => entry === body.subscriptionList);
		if (form === undefined) {
			throw new Error(`subscriptionList must be '${SUBSCRIPTION_LIST_FORMS.join("' or '")}'.`);
		}
		shape.subscriptionList = form;
	}
	return shape;
}

function optionalString(value: unknown, name: string): string | undefined {
	if (value === undefined || value === null) return undefined;
	if (typeof value !== 'string') throw new Error(`${name} must be a string.`);
	return value;
}

function optionalNumber(value: unknown, name: string): number | undefined {
	if (value === undefined || value === null) return undefined;
	if (typeof value !== 'number') throw new Error(`${name} must be a number.`);
	return value;
}

function ok(body: unknown): SimResponse {
	return { status: 200, body };
}

function notFound(message = 'No such control endpoint.'): SimResponse {
	return serviceError(404, 'not_found', message);
}
