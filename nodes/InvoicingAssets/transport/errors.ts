import type { IHttpRequestMethods, IN8nHttpFullResponse, INode } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import { RETRYABLE_STATUSES } from './contract';
import { readHeader, readRetryAfterMs, readServiceError } from './responses';
import { KnownSecrets } from './redaction';

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

/**
 * What n8n's request helpers threw: with ignoreHttpStatusErrors never an HTTP answer, so either
 * no answer came (a network error, named by its code) or a refusal explained by its own text
 * (e.g. the credential's, thrown from the token request).
 */
export function readFailure(error: unknown): HttpFailure {
	const network = networkErrorIn(error);
	if (network) return { code: network.code, message: String(network.message) };
	const { message, description } = (error ?? {}) as { message?: string; description?: string };
	return { message: String(message ?? 'Unknown error'), description: description ?? undefined };
}

type Thrown = { code?: unknown; httpCode?: unknown; message?: unknown; cause?: unknown };

/**
 * The error, or the first of its causes, that names a network error by its `code` (ECONNRESET,
 * ETIMEDOUT, …); on n8n 1.x, whose NodeApiError drops its cause, by its non-numeric httpCode.
 */
function networkErrorIn(error: unknown, depth = 0): { code: string; message: unknown } | undefined {
	const thrown = error as Thrown | undefined;
	if (!thrown || depth > 3) return undefined;
	if (typeof thrown.code === 'string') return { code: thrown.code, message: thrown.message };
	const inner = networkErrorIn(thrown.cause, depth + 1);
	if (inner) return inner;
	const { httpCode } = thrown;
	if (typeof httpCode === 'string' && !/^\d+$/.test(httpCode))
		return { code: httpCode, message: thrown.message };
	return undefined;
}

/** The HTTP status of a NodeApiError from the transport (its `httpCode`), if it has one. */
export function httpStatusOf(error: unknown): number | undefined {
	const code = Number((error as { httpCode?: unknown } | undefined)?.httpCode);
	return Number.isInteger(code) && code >= 100 ? code : undefined;
}

const ADDRESS_TOO_LONG = {
	message: 'The request’s address is too long for the service',
	hint: 'A value sent in the URL (an identifier or a filter) is too long: check the node parameters, or the expression that produces them.',
};

/** The statuses whose cause the node can name; any other gets n8n's wording, with the service's message. */
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
	/** When the failure is read (the retry clock's time), for a Retry-After given as a date; now by default. */
	now?: number;
	/** The run's secrets, hidden wherever the failure's texts quote them. */
	secrets?: KnownSecrets;
}

/** " Tried N times over N s." after more than one attempt, else nothing. */
export function triedText(attempts = 1, elapsedMs = 0): string {
	return attempts > 1 ? ` Tried ${attempts} times over ${Math.round(elapsedMs / 1000)} s.` : '';
}

/**
 * One clear NodeApiError for a failed service call; the service's own message goes in the
 * description. A network error, and a status STATUS_MESSAGES does not list, get n8n's wording.
 * Every text of the failure passes the run's redaction first: a service may quote what it was sent.
 */
export function toNodeApiError(failure: HttpFailure, context: FailureContext): NodeApiError {
	const { node, itemIndex, subject } = context;
	const secrets = context.secrets ?? new KnownSecrets();
	const redact = <T extends string | null | undefined>(text: T): T =>
		(typeof text === 'string' ? secrets.redact(text) : text) as T;
	const retried = triedText(context.attempts, context.elapsedMs);
	// A create whose answer was lost or was a fault may have happened all the same; sending it again could repeat it.
	const mayHaveActed =
		failure.status === undefined ? failure.code !== undefined : failure.status >= 500;
	const unconfirmed =
		context.method === 'POST' && mayHaveActed
			? ' The service may have done what was asked before the failure: check (e.g. with Get Many) before running the node again.'
			: '';

	if (failure.status === undefined) {
		// n8n words a network error by its code, e.g. ECONNREFUSED: "The service refused the connection - perhaps it is offline".
		const message = redact(failure.message);
		return new NodeApiError(
			node,
			{ message, code: failure.code ?? null },
			{
				description:
					failure.code === undefined
						? redact(failure.description)
						: `${message}.${retried}${unconfirmed}`,
				itemIndex,
			},
		);
	}

	const { status } = failure;
	const serviceError = readServiceError(failure.body);
	let known: { message: string; hint: string } | undefined = STATUS_MESSAGES[status];
	if (status >= 300 && status < 400) {
		const location = redact(readHeader(failure.headers, 'location'));
		known = {
			message: `The service answered with a redirect (HTTP ${status})`,
			hint: `${location ? `It points to ${location}. ` : ''}Redirects are not followed, so that the access token is never sent to another address. Check the credential’s Base URL: it must be the service’s own address for the chosen environment.`,
		};
	} else if (status === 404 && subject) {
		known = { message: `${subject} was not found`, hint: STATUS_MESSAGES[404].hint };
	}
	const hint = known?.hint ?? '';
	const serviceSays = serviceError.message
		? `The service said: ${redact(serviceError.message.trim()).replace(/\.+$/, '')}. `
		: '';
	// The service's own error code travels on the error, e.g. to tell "no such subscription" from a gateway's 404.
	const errorResponse = { httpCode: String(status), code: redact(serviceError.code) ?? null };
	return new NodeApiError(node, errorResponse, {
		message: known?.message,
		description: `${serviceSays}${hint}${retried}${unconfirmed}`.trim() || undefined,
		httpCode: String(status),
		itemIndex,
		failure: waitFailure(
			status,
			readRetryAfterMs(readHeader(failure.headers, 'retry-after'), context.now),
		),
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
