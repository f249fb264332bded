/* eslint-disable @n8n/community-nodes/no-restricted-globals */
/**
 * The page reader's flow over a stand-in transport, where timing is free to choose: pages
 * finishing out of order, how many are in flight (the read-ahead), a caller that stops, a
 * deadline. Lists that page otherwise than the contract are proven through the node over HTTPS
 * against the simulator: test/integration/action/paging-deviations.test.ts.
 */
import type { IExecuteFunctions, IHttpRequestOptions } from 'n8n-workflow';

import { ServiceClient } from '../../../nodes/InvoicingAssets/transport';
import {
	PAGE_CONCURRENCY,
	readAllPages,
	readPages,
	type ListRead,
} from '../../../nodes/InvoicingAssets/transport/pageReader';
import { actionNode, credentialWithToken } from '../fixtures';
import { ERRORS_TELL_N8N_HOW_LONG_TO_WAIT } from '../../harness/engine';

interface Answer {
	status?: number;
	body?: unknown;
	headers?: Record<string, string>;
}

const pause = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A ServiceClient over a fake n8n context: `serve(page, pageSize, count)` answers each list
 * request, after `delayMs(page)`: by default a random short delay, so that parallel pages finish
 * out of order.
 */
function clientFor(
	serve: (page: number, pageSize: number, count: number) => Answer,
	delayMs: (page: number) => number = () => Math.random() * 5,
) {
	const requests: Array<{ page: number; pageSize: number }> = [];
	let inFlight = 0;
	let mostInFlight = 0;
	const context = {
		getNode: () => actionNode,
		getCredentials: async () => credentialWithToken(),
		helpers: {
			httpRequestWithAuthentication: async (_type: string, options: IHttpRequestOptions) => {
				const page = Number(options.qs?.page);
				const pageSize = Number(options.qs?.pageSize);
				requests.push({ page, pageSize });
				inFlight += 1;
				mostInFlight = Math.max(mostInFlight, inFlight);
				await pause(delayMs(page));
				inFlight -= 1;
				const answer = serve(page, pageSize, requests.length);
				return {
					statusCode: answer.status ?? 200,
					headers: answer.headers ?? {},
					body: answer.body,
				};
			},
		},
	} as unknown as IExecuteFunctions;
	return { client: new ServiceClient(context), requests, mostInFlight: () => mostInFlight };
}

/** A list of `total` numbers served in the contract's page envelope; `totalItems: null` without a total. */
function listOf(total: number, withTotal = true) {
	const all = Array.from({ length: total }, (_, index) => index);
	return (page: number, pageSize: number): Answer => ({
		body: {
			items: all.slice((page - 1) * pageSize, page * pageSize),
			page,
			pageSize,
			totalItems: withTotal ? total : null,
		},
	});
}

const byPage = (requests: Array<{ page: number; pageSize: number }>) =>
	[...requests].sort((a, b) => a.page - b.page);
const pagesOf = (count: number, from = 1) =>
	Array.from({ length: count }, (_, index) => ({ page: from + index, pageSize: 100 }));
const numbers = (count: number, from = 0) => Array.from({ length: count }, (_, i) => from + i);
const read = (extra: Partial<ListRead> = {}): ListRead => ({ path: '/list', ...extra });

describe('readAllPages', () => {
	test('after the first page, the rest come in parallel, and the records in page order', async () => {
		const { client, requests, mostInFlight } = clientFor(listOf(2_345));
		expect(await readAllPages<number>(client, read())).toEqual(numbers(2_345));
		expect(byPage(requests)).toEqual(pagesOf(24));
		expect(mostInFlight()).toBe(PAGE_CONCURRENCY);
	});

	test('without a total (null) it reads page by page until a short page, never stopping after page 1', async () => {
		const { client, requests, mostInFlight } = clientFor(listOf(250, false));
		expect(await readAllPages<number>(client, read())).toEqual(numbers(250));
		expect(requests).toEqual(pagesOf(3));
		expect(mostInFlight()).toBe(1);
	});

	test('without a total, a last page that is exactly full costs one empty page', async () => {
		const { client, requests } = clientFor(listOf(200, false));
		expect(await readAllPages<number>(client, read())).toHaveLength(200);
		expect(requests).toHaveLength(3);
	});

	test('with a total, the page that reaches it is the last: no empty page', async () => {
		const { client, requests } = clientFor(listOf(200));
		expect(await readAllPages<number>(client, read())).toHaveLength(200);
		expect(requests).toEqual(pagesOf(2));
	});

	test('a list whose total moves while it is read is read to its new end, without gaps', async () => {
		// The first page says 150; later pages see 260. Then one that says 1,000 and shrinks to 430.
		const grew = clientFor((page, pageSize) => listOf(page === 1 ? 150 : 260)(page, pageSize));
		expect(await readAllPages<number>(grew.client, read())).toEqual(numbers(260));
		expect(byPage(grew.requests).map((request) => request.page)).toEqual([1, 2, 3]);
		const shrank = clientFor((page, pageSize) => listOf(page === 1 ? 1_000 : 430)(page, pageSize));
		expect(await readAllPages<number>(shrank.client, read())).toEqual(numbers(430));
	});

	test.each([
		[5, [{ page: 1, pageSize: 5 }]],
		[100, pagesOf(1)],
		[137, pagesOf(2)],
		[199, pagesOf(2)],
		[250, pagesOf(3)],
	])('Limit %i: full pages cut to the Limit', async (limit, pages) => {
		const { client, requests } = clientFor(listOf(5_000));
		expect(await readAllPages<number>(client, read({ qs: { status: 'paid' }, limit }))).toEqual(
			numbers(limit),
		);
		expect(byPage(requests)).toEqual(pages);
	});

	test('a failing page fails the read, and no further pages are asked for', async () => {
		const { client, requests } = clientFor((page, pageSize, count) =>
			count >= 4 ? { status: 403, body: { message: 'No' } } : listOf(100_000)(page, pageSize),
		);
		await expect(readAllPages<number>(client, read())).rejects.toThrow(
			'The API key is not allowed to do this',
		);
		expect(requests.length).toBeLessThanOrEqual(1 + 2 * PAGE_CONCURRENCY);
	});

	test('an empty list is one request', async () => {
		const { client, requests } = clientFor(listOf(0));
		expect(await readAllPages<number>(client, read())).toEqual([]);
		expect(requests).toEqual(pagesOf(1));
	});
});

describe('readPages, page by page', () => {
	test('each page says whether the list ends with it', async () => {
		const { client } = clientFor(listOf(250));
		const pages = [];
		for await (const page of readPages<number>(client, read())) pages.push(page);
		expect(pages.map((page) => [page.page, page.records.length, page.endOfList])).toEqual([
			[1, 100, false],
			[2, 100, false],
			[3, 50, true],
		]);
		expect(pages.every((page) => page.totalItems === 250)).toBe(true);
	});

	test('a slow caller: the reader works ahead by a few pages only', async () => {
		const { client, requests } = clientFor(listOf(100_000));
		for await (const page of readPages<number>(client, read())) {
			await pause(50);
			expect(requests.length).toBeLessThanOrEqual(page.page + 2 * PAGE_CONCURRENCY);
			if (page.page === 3) break;
		}
	});

	test('a caller that stops between pages: nothing more is asked for than was on its way', async () => {
		// Pages 1 and 2 answer at once; the pages asked for after them are still on their way at the stop.
		const { client, requests } = clientFor(listOf(100_000), (page) => (page <= 2 ? 0 : 50));
		for await (const page of readPages<number>(client, read())) {
			if (page.page === 2) break;
		}
		await pause(200);
		// Page 1, then pages 2 to 5 at once, then page 6 as page 2 arrived: nothing after the stop.
		expect(requests).toEqual(pagesOf(6));
	});

	test('pagesInFlight 1 reads one page at a time; startPage starts where "load more" left off', async () => {
		const { client, requests, mostInFlight } = clientFor(listOf(1_000));
		const pages = readPages<number>(client, read({ startPage: 4, pagesInFlight: 1 }));
		const first = await pages.next();
		expect(first.value).toMatchObject({ page: 4, records: numbers(100, 300) });
		await pages.return(undefined);
		await pause(20);
		expect(requests).toEqual([{ page: 4, pageSize: 100 }]);
		expect(mostInFlight()).toBe(1);
	});
});

describe('readPages for a reader that plans its own reads (the Polling Trigger)', () => {
	test('each page says when the service answered (its Date header) and how many of its records an earlier page gave', async () => {
		const date = 'Tue, 24 Nov 2026 08:00:00 GMT';
		const { client } = clientFor((page, pageSize) => {
			// Page 2 gives again the last record of page 1, as a list shifting under the read does.
			const start = (page - 1) * pageSize - (page === 2 ? 1 : 0);
			return {
				body: {
					items: numbers(page === 2 ? 50 : pageSize, start),
					page,
					pageSize,
					totalItems: null,
				},
				headers: { Date: date },
			};
		});
		const pages = [];
		for await (const page of readPages<number>(client, read())) pages.push(page);
		expect(pages.map((page) => [page.answeredAt, page.repeated])).toEqual([
			[Date.parse(date), 0],
			[Date.parse(date), 1],
		]);
		expect(pages[1].records).toHaveLength(49);
	});

	test('a total read before asks for the pages up to it at once, from startPage on', async () => {
		const { client, requests, mostInFlight } = clientFor(listOf(450), () => 20);
		// A run's first request goes alone (one token renewal per run): that of an earlier read.
		await readAllPages<number>(client, read({ limit: 1 }));
		requests.length = 0;
		const records = await readAllPages<number>(client, read({ startPage: 2, totalItems: 450 }));
		expect(records).toEqual(numbers(350, 100));
		expect(byPage(requests)).toEqual(pagesOf(4, 2));
		expect(mostInFlight()).toBe(PAGE_CONCURRENCY);
	});

	test('no retry of a page waits past the deadline: a 429 asking for 5 s ends the read at once', async () => {
		let requests = 0;
		const context = {
			getNode: () => actionNode,
			getCredentials: async () => credentialWithToken(),
			helpers: {
				httpRequestWithAuthentication: async () => {
					requests += 1;
					return { statusCode: 429, headers: { 'retry-after': '5' }, body: {} };
				},
			},
		} as unknown as IExecuteFunctions;
		const client = new ServiceClient(context);
		// On Jest's simulated clock (ServiceClient waits on the real one): time moves only here.
		jest.useFakeTimers();
		try {
			const started = Date.now();
			let endedAt: number | undefined;
			const reading = readAllPages<number>(client, read({ deadline: started + 1000 })).then(
				() => undefined,
				(error: unknown) => ((endedAt = Date.now()), error),
			);
			// Past the 5 s asked for: a retry that waited shows as a later end and a second request.
			await jest.advanceTimersByTimeAsync(60_000);
			const failure = await reading;
			expect(endedAt === undefined ? undefined : endedAt - started).toBe(0);
			expect(requests).toBe(1);
			expect(failure).toMatchObject({ httpCode: '429' });
			if (ERRORS_TELL_N8N_HOW_LONG_TO_WAIT) {
				expect(failure).toMatchObject({ failure: { cause: 'rate-limited', retryAfterMs: 5000 } });
			}
		} finally {
			jest.useRealTimers();
		}
	});
});

describe('the subscription list, in either form (SubscriptionList in contract.ts)', () => {
	const subscriptions = (count: number) =>
		Array.from({ length: count }, (_, index) => ({ id: `s-${index}` }));
	const ids = (list: Array<{ id: string }>) => list.map((subscription) => subscription.id);

	test('a bare array is the whole list, asked for once, even when it fills the page exactly', async () => {
		for (const count of [0, 100, 250]) {
			const { client, requests } = clientFor(() => ({ body: subscriptions(count) }));
			expect(ids(await client.listSubscriptions())).toEqual(ids(subscriptions(count)));
			expect(requests).toEqual(pagesOf(1));
		}
		const limited = clientFor(() => ({ body: subscriptions(250) }));
		expect(ids(await limited.client.listSubscriptions({ limit: 5 }))).toEqual(
			ids(subscriptions(5)),
		);
		expect(limited.requests).toEqual([{ page: 1, pageSize: 5 }]);
	});

	test.each([
		['with a total', true],
		['without a total', false],
	])('the page envelope %s is read page by page, a Limit its first pages', async (_name, total) => {
		const all = subscriptions(250);
		const serve = (page: number, pageSize: number): Answer => ({
			body: {
				items: all.slice((page - 1) * pageSize, page * pageSize),
				page,
				pageSize,
				totalItems: total ? all.length : null,
			},
		});
		const whole = clientFor(serve);
		expect(ids(await whole.client.listSubscriptions())).toEqual(ids(all));
		expect(byPage(whole.requests)).toEqual(pagesOf(3));
		const limited = clientFor(serve);
		expect(ids(await limited.client.listSubscriptions({ limit: 120 }))).toEqual(
			ids(all.slice(0, 120)),
		);
		expect(byPage(limited.requests)).toEqual(pagesOf(2));
	});

	test('a bare array after an envelope page is no list: the error names that page', async () => {
		const { client } = clientFor((page) => ({
			body:
				page === 1
					? { items: subscriptions(100), page: 1, pageSize: 100, totalItems: 150 }
					: subscriptions(50),
		}));
		const failure = await client.listSubscriptions({ itemIndex: 2 }).catch((error: Error) => error);
		expect(failure).toMatchObject({
			message:
				'The service’s subscription list has a form the node cannot read; please report this',
			description: expect.stringContaining('the answer for page 2 is neither'),
			context: { itemIndex: 2 },
		});
	});
});
