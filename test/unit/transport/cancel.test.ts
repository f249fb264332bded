/* eslint-disable @n8n/community-nodes/no-restricted-globals */
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

test('a cancelled execution stops waiting for a retry at once, with the last error', async () => {
	const cancel = new AbortController();
	const { context, requests } = rateLimitedContext(cancel.signal);
	const started = Date.now();
	const pending = new ServiceClient(context).request({ method: 'GET', path: '/x' });
	setTimeout(() => cancel.abort(), 200);

	await expect(pending).rejects.toThrow('The service is limiting the request rate');
	expect(Date.now() - started).toBeLessThan(5_000);
	expect(requests()).toBe(1);
});

test('an execution cancelled before the wait does not wait at all', async () => {
	const cancel = new AbortController();
	cancel.abort();
	const { context, requests } = rateLimitedContext(cancel.signal);
	await expect(new ServiceClient(context).request({ method: 'GET', path: '/x' })).rejects.toThrow(
		'The service is limiting the request rate',
	);
	expect(requests()).toBe(1);
});
