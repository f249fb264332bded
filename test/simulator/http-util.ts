/* eslint-disable @n8n/community-nodes/no-restricted-imports */
import type { IncomingMessage, ServerResponse } from 'node:http';

import { JSON_MEDIA_TYPE } from '../../nodes/InvoicingAssets/transport/contract';

export const MAX_BODY_BYTES = 1024 * 1024;

/** What a route handler answers; the pipeline writes it. */
export interface SimResponse {
	status: number;
	/** JSON-encoded unless `raw` is set. */
	body?: unknown;
	/** Sent as is, with the content type from `headers` (text/plain otherwise). */
	raw?: string;
	headers?: Record<string, string>;
	/**
	 * Set when the answer deliberately deviates from the contract (a test switch such as
	 * ListPagingDeviation): names the switch, so contract validation can exempt the answer.
	 * Never sent on the wire.
	 */
	deviation?: string;
}

export type BodyResult =
	| { ok: true; body: Buffer }
	| { ok: false; reason: 'too_large' | 'aborted' };

/** Reads the whole request body, up to `limit` bytes. */
export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<BodyResult> {
	return new Promise((resolve) => {
		const chunks: Buffer[] = [];
		let size = 0;
		let settled = false;
		const finish = (result: BodyResult) => {
			if (settled) return;
			settled = true;
			resolve(result);
		};
		req.on('data', (chunk: Buffer) => {
			size += chunk.length;
			if (size > limit) {
				req.pause();
				finish({ ok: false, reason: 'too_large' });
				return;
			}
			chunks.push(chunk);
		});
		req.on('end', () => finish({ ok: true, body: Buffer.concat(chunks) }));
		req.on('aborted', () => finish({ ok: false, reason: 'aborted' }));
		req.on('error', () => finish({ ok: false, reason: 'aborted' }));
		req.on('close', () => finish({ ok: false, reason: 'aborted' }));
	});
}

export function writeResponse(res: ServerResponse, response: SimResponse) {
	if (res.headersSent || res.destroyed) return;
	const headers: Record<string, string> = { ...(response.headers ?? {}) };
	let payload: string | undefined;
	if (response.raw !== undefined) {
		payload = response.raw;
		headers['content-type'] ??= 'text/plain; charset=utf-8';
	} else if (response.body !== undefined) {
		payload = JSON.stringify(response.body);
		headers['content-type'] ??= JSON_MEDIA_TYPE;
	}
	if (payload !== undefined) headers['content-length'] = String(Buffer.byteLength(payload));
	else if (response.status !== 204 && response.status !== 304) headers['content-length'] = '0';
	res.writeHead(response.status, headers);
	res.end(payload);
}

/** The service's error shape: `{ code, message, details }`, null for empty fields. */
export function serviceError(
	status: number,
	code: string,
	message: string,
	details: unknown = null,
	headers?: Record<string, string>,
): SimResponse {
	return { status, body: { code, message, details }, headers };
}

/** The identity service's OAuth error shape. */
export function identityError(status: number, error: string, description: string): SimResponse {
	return {
		status,
		body: { error, error_description: description },
		headers: { 'cache-control': 'no-store', pragma: 'no-cache' },
	};
}

/** The media type of a Content-Type header, lower case, without parameters. */
export function mediaType(header: string | undefined): string {
	return (header ?? '').split(';')[0].trim().toLowerCase();
}

export function defaultErrorCode(status: number): string {
	const codes: Record<number, string> = {
		400: 'bad_request',
		401: 'unauthorized',
		403: 'forbidden',
		404: 'not_found',
		405: 'method_not_allowed',
		409: 'conflict',
		413: 'payload_too_large',
		415: 'unsupported_media_type',
		429: 'rate_limited',
		500: 'internal_error',
		502: 'bad_gateway',
		503: 'service_unavailable',
		504: 'gateway_timeout',
	};
	return codes[status] ?? `http_${status}`;
}
