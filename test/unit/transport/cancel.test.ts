/* eslint-disable @n8n/community-nodes/no-restricted-globals */
/**
 * The execution's cancel signal ends a retry's wait. ServiceClient waits on the real clock (its
 * retry loop's default), so these run on Jest's simulated timers: time moves only when the test
 * moves it, and how fast the machine is changes nothing.
 */
import type { IExecuteFunctions } from 'n8n-workflow';

import { ServiceClient } from '../../../nodes/InvoicingAssets/transport';
import { actionNode, credentialWithToken } from '../fixtures';

/** A context whose service always answers 429 with `Retry-After: 30`. */
function rateLimitedContext(signal: AbortSignal) {
	let requests = 0;
	const context = {
		getNode: () => actionNode,
		getCredentials: async () => credentialWithToken(),
		getExecutionCancelSignal: () => signal,
		helpers: {
			httpRequestWithAuthentication: async () => {
				requests += 1;
				return { statusCode: 429, headers: { 'retry-after': '30' }, body: null };
			},
		},
	} as unknown as IExecuteFunctions;
	return { context, requests: () => requests };
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

test('a cancelled execution stops waiting for a retry at once, with the last error', async () => {
	const cancel = new AbortController();
	const { context, requests } = rateLimitedContext(cancel.signal);
	const started = Date.now();
	let endedAt: number | undefined;
	const pending = new ServiceClient(context)
		.request({ method: 'GET', path: '/x' })
		.finally(() => (endedAt = Date.now()));
	pending.catch(() => undefined);
	setTimeout(() => cancel.abort(), 200);

	// Past the 30 s the service asked for, and its retries' too: a wait the signal did not end shows.
	await jest.advanceTimersByTimeAsync(120_000);
	await expect(pending).rejects.toThrow('The service is limiting the request rate');
	expect(endedAt === undefined ? undefined : endedAt - started).toBe(200);
	expect(requests()).toBe(1);
});

test('an execution cancelled before the wait does not wait at all', async () => {
	const cancel = new AbortController();
	cancel.abort();
	const { context, requests } = rateLimitedContext(cancel.signal);
	const started = Date.now();
	let endedAt: number | undefined;
	const pending = new ServiceClient(context)
		.request({ method: 'GET', path: '/x' })
		.finally(() => (endedAt = Date.now()));
	pending.catch(() => undefined);

	await jest.advanceTimersByTimeAsync(120_000);
	await expect(pending).rejects.toThrow('The service is limiting the request rate');
	expect(endedAt === undefined ? undefined : endedAt - started).toBe(0);
	expect(requests()).toBe(1);
});
