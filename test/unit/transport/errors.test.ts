import { NodeApiError } from 'n8n-workflow';

import { readFailure, toNodeApiError } from '../../../nodes/InvoicingAssets/transport/errors';
import { expectNoSecret } from '../../harness/secrets';
import { actionNode } from '../fixtures';

const node = actionNode;
const CHECK_VALUES = 'Check the values of the node parameters against the message above.';

/** What axios throws for an HTTP error answer. */
function axiosError(status: number, data: unknown, headers: Record<string, string> = {}) {
	return Object.assign(new Error(`Request failed with status code ${status}`), {
		isAxiosError: true,
		response: { status, data, headers },
		config: { headers: { Authorization: 'Bearer secret-token' } },
	});
}

describe('readFailure', () => {
	test('reads status, body and headers of an HTTP answer', () => {
		const body = { code: 'not_found', message: 'Invoice X was not found.' };
		expect(readFailure(axiosError(404, body, { 'retry-after': '1' }))).toEqual({
			status: 404,
			body,
			headers: { 'retry-after': '1' },
			message: 'Request failed with status code 404',
		});
	});

	test('reads the answer behind the NodeApiError n8n wraps it in', () => {
		const wrapped = new NodeApiError(node, axiosError(429, { code: 'rate_limited' }) as never);
		const failure = readFailure(wrapped);
		expect(failure.status).toBe(429);
		expect(failure.body).toEqual({ code: 'rate_limited' });
	});

	test('finds a network error code, also in a nested cause', () => {
		expect(readFailure(Object.assign(new Error('reset'), { code: 'ECONNRESET' })).code).toBe(
			'ECONNRESET',
		);
		const nested = Object.assign(new Error('fetch failed'), {
			cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }),
		});
		const read = readFailure(nested);
		expect(read.code).toBe('ECONNREFUSED');
		expect(read.status).toBeUndefined();
		expect(readFailure(new Error('socket hang up')).code).toBe('ECONNRESET');
	});

	test('keeps the message and description of a failure that is not an HTTP answer', () => {
		const refusal = Object.assign(new Error('The API key expired on 2026-01-01'), {
			description: 'Create a replacement key.',
		});
		expect(readFailure(refusal)).toEqual({
			message: 'The API key expired on 2026-01-01',
			description: 'Create a replacement key.',
		});
	});

	test('never keeps the request, which carries the bearer token', () => {
		expectNoSecret(readFailure(axiosError(500, null)), ['secret-token'], 'the failure read');
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
		expect(error.description).toContain("The service said: Invoice 'INV-9' was not found. ");
		expect(error.description).not.toContain('..');
		expect(error.context.itemIndex).toBe(2);
		expect(error.httpCode).toBe('404');
	});

	test.each([
		[400, 'The service rejected the request as invalid', CHECK_VALUES],
		[
			401,
			'The service refused the access token',
			'A new token was requested and refused as well. Check that the credential’s Base URL belongs to the same environment (production or sandbox) as its API key.',
		],
		[
			403,
			'The API key is not allowed to do this',
			'Ask a portal user with the "Customer Admin" permission which data this API key may read, or use a key that has access.',
		],
		[
			404,
			'The requested resource was not found',
			'Check the ID or number, and that it belongs to the environment of the credential.',
		],
		[
			409,
			'The request conflicts with the current state of the resource',
			'Fetch the resource again and retry with its current state.',
		],
		[422, 'The service could not process the values given', CHECK_VALUES],
		[
			429,
			'The service is limiting the request rate',
			'Lower the node’s Concurrency option, spread the workflow’s runs over time, or try again later.',
		],
		[
			500,
			'The service failed to process the request (HTTP 500)',
			'This is a fault at the service. Try again later; n8n’s Retry On Fail setting can do that for you.',
		],
		[
			503,
			'The service failed to process the request (HTTP 503)',
			'This is a fault at the service. Try again later; n8n’s Retry On Fail setting can do that for you.',
		],
		[418, 'The service refused the request (HTTP 418)', CHECK_VALUES],
	])('HTTP %i: %s', (status, message, description) => {
		const error = toNodeApiError({ status, body: null, message: 'x' }, { node });
		expect(error.message).toBe(message);
		// Without a body from the service, the description is the hint alone.
		expect(error.description).toBe(description);
	});

	test('OAuth-style and problem+json bodies are read too', () => {
		const oauth = toNodeApiError(
			{
				status: 400,
				body: { error: 'invalid_request', error_description: 'pageSize too big' },
				message: '',
			},
			{ node },
		);
		expect(oauth.description).toContain('The service said: pageSize too big.');
		const problem = toNodeApiError(
			{
				status: 422,
				body: JSON.stringify({ title: 'Bad', detail: 'status unknown' }),
				message: '',
			},
			{ node },
		);
		expect(problem.description).toContain('The service said: status unknown.');
	});

	test('a redirect is named as such, with where it pointed', () => {
		const error = toNodeApiError(
			{ status: 301, headers: { Location: 'https://elsewhere.example.com/x' }, message: '' },
			{ node },
		);
		expect(error.message).toBe('The service answered with a redirect (HTTP 301)');
		expect(error.description).toContain('https://elsewhere.example.com/x');
		expect(error.description).toContain('Base URL');
	});

	test('retries are reported', () => {
		const error = toNodeApiError(
			{ status: 429, body: null, message: '' },
			{ node, attempts: 5, elapsedMs: 4200 },
		);
		expect(error.description).toContain('Tried 5 times over 4 s.');
	});

	test('a timeout and an unreachable service get their own messages', () => {
		const timeout = toNodeApiError(
			{ code: 'ETIMEDOUT', message: 'timeout of 30000ms exceeded' },
			{ node, timeoutMs: 30_000 },
		);
		expect(timeout.message).toBe('The service did not answer within 30 s');
		const refused = toNodeApiError(
			{ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' },
			{ node },
		);
		expect(refused.message).toBe('The service could not be reached');
		expect(refused.description).toContain('ECONNREFUSED');
	});

	test('a refusal explained by its own text keeps that text', () => {
		const error = toNodeApiError(
			{
				message: 'The identity service rejected the client ID or secret',
				description: 'Check the Client ID.',
			},
			{ node, itemIndex: 0 },
		);
		expect(error.message).toBe('The identity service rejected the client ID or secret');
		expect(error.description).toBe('Check the Client ID.');
	});
});
