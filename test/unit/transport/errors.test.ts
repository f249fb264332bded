import { NodeApiError } from 'n8n-workflow';

import { readFailure, toNodeApiError } from '../../../nodes/InvoicingAssets/transport/errors';
import { ERRORS_TELL_N8N_HOW_LONG_TO_WAIT, testNeeding2x } from '../../harness/engine';
import { expectNoSecret } from '../../harness/secrets';
import { actionNode } from '../fixtures';

const node = actionNode;

describe('readFailure: what n8n’s request helpers threw', () => {
	test('a network error, by the code of the error or of a cause, never with the request that carries the token', () => {
		const request = { headers: { Authorization: 'Bearer secret-token' } };
		const nested = Object.assign(new Error('fetch failed'), {
			config: request,
			cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
		});
		expect(readFailure(nested)).toEqual({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' });
		expectNoSecret(readFailure(nested), ['secret-token'], 'the failure read');
		// n8n 1.x's NodeApiError drops its cause and keeps the code as its httpCode.
		const wrapped = new NodeApiError(node, { message: 'socket hang up', code: 'ECONNRESET' });
		expect(readFailure(wrapped).code).toBe('ECONNRESET');
	});

	test('a refusal explained by its own text keeps it, and is no network error', () => {
		const refusal = Object.assign(new Error('The API key expired on 2026-01-01'), {
			description: 'Create a replacement key.',
		});
		expect(readFailure(new NodeApiError(node, refusal as never))).toEqual({
			message: 'The API key expired on 2026-01-01',
			description: 'Create a replacement key.',
		});
	});
});

describe('toNodeApiError', () => {
	test('404 names the record, and the service’s message goes in the description once', () => {
		const error = toNodeApiError(
			{
				status: 404,
				body: { code: 'not_found', message: "Invoice 'INV-9' was not found." },
				message: '',
			},
			{ node, itemIndex: 2, subject: "Invoice 'INV-9'" },
		);
		expect(error).toBeInstanceOf(NodeApiError);
		expect(error.message).toBe("Invoice 'INV-9' was not found");
		expect(error.description).toBe(
			"The service said: Invoice 'INV-9' was not found. Check the ID or number, and that it belongs to the environment of the credential.",
		);
		expect(error.context.itemIndex).toBe(2);
		expect(error.httpCode).toBe('404');
	});

	test.each([
		[401, 'The service refused the access token'],
		[403, 'The API key is not allowed to do this'],
		[404, 'The requested resource was not found'],
		[400, 'The service rejected the request as invalid'],
		[422, 'The service could not process the values given'],
		[429, 'The service is limiting the request rate'],
		// Statuses the node has nothing to add to: n8n's wording.
		[409, 'Your request is invalid or could not be processed by the service'],
		[500, 'The service was not able to process your request'],
		[
			503,
			'Service unavailable - try again later or consider setting this node to retry automatically (in the node settings)',
		],
	])('HTTP %i: %s', (status, message) => {
		const error = toNodeApiError({ status, body: { message: 'Said so.' }, message: 'x' }, { node });
		expect(error.message).toBe(message);
		expect(error.description).toMatch(/^The service said: Said so\./);
	});

	test('a network error gets n8n’s wording; what failed and the attempts are in the description', () => {
		const error = toNodeApiError(
			{ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:1' },
			{ node, method: 'GET', attempts: 5, elapsedMs: 4200 },
		);
		expect(error.message).toBe('The service refused the connection - perhaps it is offline');
		expect(error.description).toBe('connect ECONNREFUSED 127.0.0.1:1. Tried 5 times over 4 s.');
	});

	testNeeding2x(ERRORS_TELL_N8N_HOW_LONG_TO_WAIT)(
		'a Retry-After given as an HTTP date tells n8n the wait from the time it is read at',
		() => {
			const now = Date.UTC(2026, 5, 15, 8, 0, 0, 318);
			const retryAt = Date.UTC(2026, 5, 15, 8, 0, 3);
			const headers = { 'retry-after': new Date(retryAt).toUTCString() };
			const error = toNodeApiError(
				{ status: 429, headers, message: 'x' },
				{ node, attempts: 2, elapsedMs: 3000, now },
			);
			expect(error).toMatchObject({
				failure: { cause: 'rate-limited', retryAfterMs: retryAt - now },
			});
		},
	);

	test('a refusal explained by its own text keeps that text', () => {
		const error = toNodeApiError(
			{
				message: 'The identity service rejected the client ID or secret',
				description: 'Check it.',
			},
			{ node, itemIndex: 0 },
		);
		expect([error.message, error.description]).toEqual([
			'The identity service rejected the client ID or secret',
			'Check it.',
		]);
	});
});
