/**
 * A test switch (`echoRequests`): every error answer of the identity service and the Data Service
 * quotes the request back, as a careless service or a broken gateway does. The quote holds the
 * method, the URL, the headers (the bearer token among them) and the body (the token request's
 * form with the client secret, a create's notification URL with its delivery key), three times:
 * as sent, JSON-escaped and URL-encoded (`apiKey%3D…`). It goes where a client reads the
 * service's words: the identity service's `error_description`, the Data Service's `message`, or
 * the text of an answer that is not JSON.
 */
import type { IncomingMessage } from '../tools/node-apis';

import type { SimResponse } from './http-util';
import { secretsOfUrl } from './redact';
import type { SecretRecord } from './secret-record';

export interface EchoedRequest {
	method: string;
	/** Path and query as received. */
	url: string;
	headers: IncomingMessage['headers'];
	body: Buffer | undefined;
}

/** `response` with the request quoted in it when it is an error answer; others as they are. */
export function withRequestEcho(
	response: SimResponse,
	request: EchoedRequest,
	server: 'identity' | 'service',
	secretRecord?: SecretRecord,
): SimResponse {
	if (response.status < 400) return response;
	const body = request.body?.toString('utf8') ?? '';
	noteDeliveryKeys(body, secretRecord);
	const quoted = `${request.method} ${request.url} headers ${JSON.stringify(request.headers)} body ${body}`;
	const echo = `The request was: ${quoted} | as JSON: ${JSON.stringify(quoted)} | URL-encoded: ${encodeURIComponent(quoted)}`;
	if (response.raw !== undefined) return { ...response, raw: `${response.raw}\n${echo}` };
	const fields =
		typeof response.body === 'object' && response.body !== null && !Array.isArray(response.body)
			? (response.body as Record<string, unknown>)
			: {};
	const field = server === 'identity' ? 'error_description' : 'message';
	const said = typeof fields[field] === 'string' ? `${fields[field] as string} ` : '';
	return { ...response, body: { ...fields, [field]: `${said}${echo}` } };
}

/**
 * The delivery key of a quoted create is recorded for the secret scan even when no subscription
 * was made (a fault answered first); tokens and client secrets are recorded already.
 */
function noteDeliveryKeys(body: string, secretRecord?: SecretRecord) {
	if (!secretRecord) return;
	try {
		const { notificationUrl } = JSON.parse(body) as { notificationUrl?: unknown };
		if (typeof notificationUrl !== 'string') return;
		for (const secret of secretsOfUrl(notificationUrl)) secretRecord.note('deliveryKey', secret);
	} catch {
		// Not a JSON body: no notification URL in it.
	}
}
