import type { IHttpRequestMethods, IN8nHttpFullResponse, INode, JsonObject } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import { RETRYABLE_STATUSES, UNPROCESSED_STATUSES } from './contract';
import { readHeader, readRetryAfterMs, readServiceError } from './responses';
import { redactDeliveryKeysInText } from './notificationUrl';

/** What a failed request left us: never the request itself, which carries the bearer token. */
export interface HttpFailure {
	status?: number;
	body?: unknown;
	headers?: Record<string, unknown>;
	/** A Node.js network error code such as ECONNRESET, when no response arrived. */
	code?: string;
	message: string;
	/** Set when the failure is not an HTTP answer but a refusal explained by its own text (e.g. the credential's). */
	description?: string;
}

/** An answer of status 300 or more, as a failure. */
export function failureOfResponse(response: IN8nHttpFullResponse): HttpFailure {
	return {
		status: response.statusCode,
		body: response.body,
		headers: (response.headers ?? {}) as Record<string, unknown>,
		message: `Request failed with status code ${response.statusCode}`,
	};
}

const NETWORK_CODES = new Set([
	'ECONNABORTED',
	'ECONNREFUSED',
	'ECONNRESET',
	'EHOSTUNREACH',
	'ENETDOWN',
	'ENETUNREACH',
	'ENOTFOUND',
	'EAI_AGAIN',
	'EPIPE',
	'ETIMEDOUT',
	'ESOCKETTIMEDOUT',
	'UND_ERR_SOCKET',
	'UND_ERR_CONNECT_TIMEOUT',
	'UND_ERR_HEADERS_TIMEOUT',
	'UND_ERR_BODY_TIMEOUT',
]);

/** Any object n8n's helpers may throw, read field by field. */
type UnknownObject = Record<string, unknown> | undefined;

/** Reads status, body and headers from whatever n8n's request helpers threw. */
export function readFailure(error: unknown): HttpFailure {
	const outer = error as UnknownObject;
	const cause = (outer?.cause as UnknownObject) ?? outer;
	const response = (cause?.response as UnknownObject) ?? (outer?.response as UnknownObject);
	const statusValue = response?.status ?? response?.statusCode ?? outer?.httpCode;
	const status = Number(statusValue);
	// n8n 1.x's NodeApiError drops its cause: what survives is the status or network code in
	// httpCode and an object body in context.data.
	const survivingCode = typeof outer?.httpCode === 'string' ? outer.httpCode : undefined;
	const code =
		findNetworkCode(cause) ??
		findNetworkCode(outer) ??
		(survivingCode && NETWORK_CODES.has(survivingCode) ? survivingCode : undefined);
	const message = String(
		(cause?.message as string) ?? (outer?.message as string) ?? 'Unknown error',
	);
	if (Number.isInteger(status) && status >= 100) {
		return {
			status,
			body: response?.data ?? response?.body ?? (outer?.context as UnknownObject)?.data,
			headers: (response?.headers as Record<string, unknown>) ?? {},
			message,
		};
	}
	if (code) return { code, message };
	const description = (cause?.description as string) ?? (outer?.description as string);
	return { message, description: description ?? undefined };
}

function findNetworkCode(error: UnknownObject, depth = 0): string | undefined {
	if (!error || depth > 3) return undefined;
	if (typeof error.code === 'string' && NETWORK_CODES.has(error.code)) return error.code;
	if (error.message === 'socket hang up' || error.message === 'terminated') return 'ECONNRESET';
	return findNetworkCode(error.cause as UnknownObject, depth + 1);
}

/** The HTTP status of a NodeApiError from the transport (its `httpCode`), if it has one. */
export function httpStatusOf(error: unknown): number | undefined {
	const code = Number((error as { httpCode?: unknown } | undefined)?.httpCode);
	return Number.isInteger(code) && code >= 100 ? code : undefined;
}

/** Whether the service may have acted on a request that failed this way (its answer was lost or was a fault). */
export function mayHaveActed(failure: HttpFailure): boolean {
	if (failure.status === undefined) return failure.code !== undefined;
	return failure.status >= 500 && !UNPROCESSED_STATUSES.includes(failure.status);
}

const ADDRESS_TOO_LONG = {
	message: 'The request’s address is too long for the service',
	hint: 'A value sent in the URL (an identifier or a filter) is too long: check the node parameters, or the expression that produces them.',
};

const STATUS_MESSAGES: Record<number, { message: string; hint: string }> = {
	400: {
		message: 'The service rejected the request as invalid',
		hint: 'Check the values of the node parameters against the message above.',
	},
	401: {
		message: 'The service refused the access token',
		hint: 'A new token was requested and refused as well. Check that the credential’s Base URL belongs to the same environment (production or sandbox) as its API key.',
	},
	403: {
		message: 'The API key is not allowed to do this',
		hint: 'Ask a portal user with the "Customer Admin" permission which data this API key may read, or use a key that has access.',
	},
	404: {
		message: 'The requested resource was not found',
		hint: 'Check the ID or number, and that it belongs to the environment of the credential.',
	},
	409: {
		message: 'The request conflicts with the current state of the resource',
		hint: 'Fetch the resource again and retry with its current state.',
	},
	414: ADDRESS_TOO_LONG,
	422: {
		message: 'The service could not process the values given',
		hint: 'Check the values of the node parameters against the message above.',
	},
	429: {
		message: 'The service is limiting the request rate',
		hint: 'Lower the node’s Concurrency option, spread the workflow’s runs over time, or try again later.',
	},
	431: ADDRESS_TOO_LONG,
};

export interface FailureContext {
	node: INode;
	itemIndex?: number;
	/** Names the record for a 404, e.g. "Invoice 'INV-1'". */
	subject?: string;
	method?: IHttpRequestMethods;
	/** What the retries did, when they gave up. */
	attempts?: number;
	elapsedMs?: number;
	timeoutMs?: number;
	/** The longest the retries may wait in all; a longer Retry-After is not waited for. */
	maxRetryWaitMs?: number;
}

/** One clear NodeApiError for a failed service call; the service's own message goes in the description. */
export function toNodeApiError(failure: HttpFailure, context: FailureContext): NodeApiError {
	const { node, itemIndex, subject } = context;
	const retried =
		context.attempts && context.attempts > 1
			? ` Tried ${context.attempts} times over ${Math.round((context.elapsedMs ?? 0) / 1000)} s.`
			: '';
	// A create that failed this way may have happened all the same; sending it again could repeat it.
	const unconfirmed =
		context.method === 'POST' && mayHaveActed(failure)
			? ' The service may have done what was asked before the failure: check (e.g. with Get Many) before running the node again.'
			: '';

	if (failure.status === undefined) {
		if (!failure.code) {
			return new NodeApiError(node, { message: failure.message } as JsonObject, {
				message: failure.message,
				description: failure.description,
				itemIndex,
			});
		}
		const timedOut = ['ECONNABORTED', 'ETIMEDOUT', 'ESOCKETTIMEDOUT'].includes(failure.code);
		const message = timedOut
			? `The service did not answer within ${Math.round((context.timeoutMs ?? 0) / 1000)} s`
			: 'The service could not be reached';
		return new NodeApiError(node, { message } as JsonObject, {
			message,
			description: `${failure.code}: ${failure.message}. Check the credential’s Base URL and the network between n8n and the service.${retried}${unconfirmed}`,
			itemIndex,
		});
	}

	const { status } = failure;
	const serviceError = readServiceError(failure.body);
	const known = STATUS_MESSAGES[status];
	let message: string;
	let hint: string;
	if (status >= 300 && status < 400) {
		const location = headerValue(failure.headers, 'location');
		message = `The service answered with a redirect (HTTP ${status})`;
		hint = `${location ? `It points to ${location}. ` : ''}Redirects are not followed, so that the access token is never sent to another address. Check the credential’s Base URL: it must be the service’s own address for the chosen environment.`;
	} else if (status === 404 && subject) {
		message = `${subject} was not found`;
		hint = STATUS_MESSAGES[404].hint;
	} else if (known) {
		({ message, hint } = known);
	} else if (status >= 500) {
		message = `The service failed to process the request (HTTP ${status})`;
		hint =
			context.method === 'POST'
				? 'This is a fault at the service. Try again later.'
				: 'This is a fault at the service. Try again later; n8n’s Retry On Fail setting can do that for you.';
	} else {
		message = `The service refused the request (HTTP ${status})`;
		hint = 'Check the values of the node parameters against the message above.';
	}
	const waitAsked = readRetryAfterMs(headerValue(failure.headers, 'retry-after'));
	if (
		RETRYABLE_STATUSES.includes(status) &&
		waitAsked !== undefined &&
		context.maxRetryWaitMs !== undefined &&
		(context.elapsedMs ?? 0) + waitAsked > context.maxRetryWaitMs
	) {
		hint = `The service asked to wait ${Math.ceil(waitAsked / 1000)} s before trying again, longer than the node waits (${Math.round(context.maxRetryWaitMs / 1000)} s in all), so it stopped. ${hint}`;
	} else if (status === 429 && (context.attempts ?? 1) > 1) {
		hint = `The node waited as the service asked and retried, without success. ${hint}`;
	}
	// The service's text may echo what it was sent, such as a notification URL with its key.
	const serviceSays = serviceError.message
		? `The service said: ${redactDeliveryKeysInText(serviceError.message.trim()).replace(/\.+$/, '')}. `
		: '';
	// The service's own error code travels on the error, e.g. to tell "no such subscription" from a gateway's 404.
	const errorResponse = { message, httpCode: String(status), code: serviceError.code ?? null };
	return new NodeApiError(node, errorResponse as JsonObject, {
		message,
		description: `${serviceSays}${hint}${retried}${unconfirmed}`,
		httpCode: String(status),
		itemIndex,
		failure: waitFailure(status, waitAsked),
	});
}

/**
 * Why a request the service asked to wait for failed, as n8n 2.x reads it from the error (its
 * poll scheduler then waits at least that long before the next poll); n8n 1.x ignores it.
 */
function waitFailure(status: number, retryAfterMs: number | undefined) {
	if (!RETRYABLE_STATUSES.includes(status)) return undefined;
	const cause = status === 429 ? ('rate-limited' as const) : ('temporarily-unavailable' as const);
	return retryAfterMs !== undefined && retryAfterMs > 0 ? { cause, retryAfterMs } : { cause };
}

function headerValue(
	headers: Record<string, unknown> | undefined,
	name: string,
): string | undefined {
	const value = readHeader(headers, name);
	return typeof value === 'string' && value !== '' ? value : undefined;
}
