/* eslint-disable @n8n/community-nodes/no-restricted-globals */
import type { IExecuteFunctions, IHttpRequestOptions } from 'n8n-workflow';

import { PAGE_CONCURRENCY, ServiceClient } from '../../../nodes/InvoicingAssets/transport';
import { DEFAULT_RETRY_POLICY } from '../../../nodes/InvoicingAssets/transport/retry';
import { actionNode, credentialWithToken } from '../fixtures';

const node = actionNode;

interface Answer {
	status?: number;
	body?: unknown;
}

/**
 * A ServiceClient over a fake n8n context: `serve(page, pageSize, count)` answers each list
 * request, after a random short delay so that parallel pages finish out of order.
 */
function clientFor(serve: (page: number, pageSize: number, count: number) => Answer) {
	const requests: Array<{ page: number; pageSize: number }> = [];
	let inFlight = 0;
	let mostInFlight = 0;
	const context = {
		getNode: () => node,
		getCredentials: async () => credentialWithToken(),
		helpers: {
			httpRequestWithAuthentication: async (_type: string, options: IHttpRequestOptions) => {
				const page = Number(options.qs?.page);
				const pageSize = Number(options.qs?.pageSize);
				requests.push({ page, pageSize });
				inFlight += 1;
				mostInFlight = Math.max(mostInFlight, inFlight);
				await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
				inFlight -= 1;
				const answer = serve(page, pageSize, requests.length);
				if (answer.status && answer.status >= 400) {
					throw Object.assign(new Error(`HTTP ${answer.status}`), {
						response: { status: answer.status, data: answer.body, headers: {} },
					});
				}
				return { statusCode: 200, headers: {}, body: answer.body };
			},
		},
	} as unknown as IExecuteFunctions;
	const client = new ServiceClient(context, { ...DEFAULT_RETRY_POLICY, maxAttempts: 1 });
	return { client, requests, mostInFlight: () => mostInFlight };
}

/** A list of `total` numbers served in the contract's page envelope. */
function listOf(total: number, withTotal = true) {
	const all = Array.from({ length: total }, (_, index) => index);
	return (page: number, pageSize: number): Answer => ({
		body: {
			items: all.slice((page - 1) * pageSize, page * pageSize),
			page,
			pageSize,
			...(withTotal ? { totalItems: total } : {}),
		},
	});
}

const byPage = (requests: Array<{ page: number; pageSize: number }>) =>
	[...requests].sort((a, b) => a.page - b.page);

describe('ServiceClient.paginate', () => {
	test('after the first page, the rest come in parallel and in order', async () => {
		const { client, requests, mostInFlight } = clientFor(listOf(2_345));
		const records = await client.paginate<number>('/list', {});
		expect(records).toEqual(Array.from({ length: 2_345 }, (_, index) => index));
		expect(byPage(requests)).toEqual(
			Array.from({ length: 24 }, (_, index) => ({ page: index + 1, pageSize: 100 })),
		);
		expect(mostInFlight()).toBe(PAGE_CONCURRENCY);
	});

	test('without a total it reads page by page until a short page', async () => {
		const { client, requests, mostInFlight } = clientFor(listOf(250, false));
		expect(await client.paginate<number>('/list', {})).toHaveLength(250);
		expect(requests).toEqual([
			{ page: 1, pageSize: 100 },
			{ page: 2, pageSize: 100 },
			{ page: 3, pageSize: 100 },
		]);
		expect(mostInFlight()).toBe(1);
	});

	test('without a total, a last page that is exactly full costs one empty page', async () => {
		const { client, requests } = clientFor(listOf(200, false));
		expect(await client.paginate<number>('/list', {})).toHaveLength(200);
		expect(requests).toHaveLength(3);
	});

	test('a list that grew while it was read is read to its new end', async () => {
		// The first page says 150; later pages see 260.
		const { client, requests } = clientFor((page, pageSize) =>
			listOf(page === 1 ? 150 : 260)(page, pageSize),
		);
		const records = await client.paginate<number>('/list', {});
		expect(records).toEqual(Array.from({ length: 260 }, (_, index) => index));
		expect(byPage(requests).map((request) => request.page)).toEqual([1, 2, 3]);
	});

	test('a list that shrank ends at its short page, without gaps', async () => {
		const { client } = clientFor((page, pageSize) =>
			listOf(page === 1 ? 1_000 : 430)(page, pageSize),
		);
		const records = await client.paginate<number>('/list', {});
		expect(records).toEqual(Array.from({ length: 430 }, (_, index) => index));
	});

	test('a Limit is met exactly, with the plan of nextPage', async () => {
		const { client, requests } = clientFor(listOf(5_000));
		const records = await client.paginate<number>('/list', { status: 'paid' }, 250);
		expect(records).toEqual(Array.from({ length: 250 }, (_, index) => index));
		expect(byPage(requests)).toEqual([
			{ page: 1, pageSize: 100 },
			{ page: 2, pageSize: 100 },
			{ page: 5, pageSize: 50 },
		]);
	});

	test('a failing page fails the listing, and no further pages are asked for', async () => {
		const { client, requests } = clientFor((page, pageSize, count) =>
			count >= 4 ? { status: 403, body: { message: 'No' } } : listOf(100_000)(page, pageSize),
		);
		await expect(client.paginate<number>('/list', {})).rejects.toThrow(
			'The API key is not allowed to do this',
		);
		// The first page, then at most one more round of parallel pages.
		expect(requests.length).toBeLessThanOrEqual(1 + 2 * PAGE_CONCURRENCY);
	});

	test('pages shorter than asked while more records remain are an error, not a silently short list', async () => {
		// A service whose page-size limit is 50, not the assumed 100.
		const { client, requests } = clientFor((page, pageSize) =>
			listOf(1_050)(page, Math.min(pageSize, 50)),
		);
		await expect(client.paginate<number>('/list', {})).rejects.toThrow(
			'The service’s pages do not add up, so the list would be incomplete',
		);
		expect(requests).toEqual([{ page: 1, pageSize: 100 }]);
	});

	test('an answer that is not a page is a clear error', async () => {
		const { client } = clientFor(() => ({ body: [1, 2, 3] }));
		await expect(client.paginate<number>('/list', {})).rejects.toThrow(
			'The service answered a list request with an unexpected shape',
		);
	});

	test('an empty list is one request', async () => {
		const { client, requests } = clientFor(listOf(0));
		expect(await client.paginate<number>('/list', {})).toEqual([]);
		expect(requests).toEqual([{ page: 1, pageSize: 100 }]);
	});
});
