/* eslint-disable @n8n/community-nodes/no-restricted-globals */
/**
 * The page reader's rules over a stand-in transport, where timing and page shapes are free to
 * choose: pages finishing out of order, how many are in flight, a caller that stops. The same
 * rules through the node over real HTTPS against the simulator: test/integration/action/paging-deviations.test.ts.
 */
import type { IExecuteFunctions, IHttpRequestOptions } from 'n8n-workflow';

import { ServiceClient } from '../../../nodes/InvoicingAssets/transport';
import {
	ListReadError,
	PAGE_CONCURRENCY,
	PagesDoNotAddUpError,
	readAllPages,
	readPages,
	type ListRead,
} from '../../../nodes/InvoicingAssets/transport/pageReader';
import { DEFAULT_RETRY_POLICY } from '../../../nodes/InvoicingAssets/transport/retry';
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
				if (answer.status && answer.status >= 400) {
					throw Object.assign(new Error(`HTTP ${answer.status}`), {
						response: { status: answer.status, data: answer.body, headers: answer.headers ?? {} },
					});
				}
				return { statusCode: 200, headers: answer.headers ?? {}, body: answer.body };
			},
		},
	} as unknown as IExecuteFunctions;
	const client = new ServiceClient(context, { ...DEFAULT_RETRY_POLICY, maxAttempts: 1 });
	return { client, requests, mostInFlight: () => mostInFlight };
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

	test('a total left out is read the same way as a null one', async () => {
		const { client, requests } = clientFor((page, pageSize) => ({
			body: { items: numbers(pageSize, (page - 1) * pageSize).filter((n) => n < 150) },
		}));
		expect(await readAllPages<number>(client, read())).toEqual(numbers(150));
		expect(requests).toHaveLength(2);
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

	test('a list that grew while it was read is read to its new end', async () => {
		// The first page says 150; later pages see 260.
		const { client, requests } = clientFor((page, pageSize) =>
			listOf(page === 1 ? 150 : 260)(page, pageSize),
		);
		expect(await readAllPages<number>(client, read())).toEqual(numbers(260));
		expect(byPage(requests).map((request) => request.page)).toEqual([1, 2, 3]);
	});

	test('a list that shrank ends at its short page, without gaps', async () => {
		const { client } = clientFor((page, pageSize) =>
			listOf(page === 1 ? 1_000 : 430)(page, pageSize),
		);
		expect(await readAllPages<number>(client, read())).toEqual(numbers(430));
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

	test('a record a shifted list gives again is kept once, and the Limit is still met', async () => {
		// After page 1, one record is inserted at the front: every later page starts one earlier.
		const { client, requests } = clientFor((page, pageSize) => {
			const shifted = page === 1 ? numbers(1_000) : [-1, ...numbers(1_000)];
			return {
				body: {
					items: shifted.slice((page - 1) * pageSize, page * pageSize),
					totalItems: shifted.length,
				},
			};
		});
		expect(await readAllPages<number>(client, read({ limit: 200 }))).toEqual(numbers(200));
		// Page 2 repeated record 99, so a third page was needed for the 200th record.
		expect(byPage(requests)).toEqual(pagesOf(3));
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

	test('pages shorter than asked while more records remain: PagesDoNotAddUpError, never a short list', async () => {
		// A service whose page-size limit is 50, not the assumed 100.
		const { client, requests } = clientFor((page, pageSize) =>
			listOf(1_050)(page, Math.min(pageSize, 50)),
		);
		const failure = await readAllPages<number>(client, read()).catch((error: unknown) => error);
		expect(failure).toBeInstanceOf(PagesDoNotAddUpError);
		expect((failure as Error).message).toBe(
			'The service’s pages do not add up, so the list would be incomplete',
		);
		expect(requests).toEqual(pagesOf(1));
	});

	test('a page longer than asked for, without a total that covers it: a ListReadError', async () => {
		const { client, requests } = clientFor(() => ({ body: { items: numbers(150) } }));
		const failure = await readAllPages<number>(client, read()).catch((error: unknown) => error);
		expect(failure).toBeInstanceOf(ListReadError);
		expect(failure).not.toBeInstanceOf(PagesDoNotAddUpError);
		expect((failure as ListReadError).detail).toContain('held 150 records where 100 were asked');
		expect(requests).toHaveLength(1);
	});

	test('an answer that is not a page is a clear error', async () => {
		const { client } = clientFor(() => ({ body: [1, 2, 3] }));
		await expect(readAllPages<number>(client, read())).rejects.toThrow(
			'The service answered a list request with an unexpected shape',
		);
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

	test.each([
		[
			'its total moves',
			(page: number, pageSize: number) => listOf(page === 1 ? 300 : 299)(page, pageSize),
			'an earlier page reported 300 records in all, page 2 reports 299',
		],
		[
			'a record comes again',
			(page: number, pageSize: number) => {
				const all = page === 1 ? numbers(300) : [-1, ...numbers(299)];
				return { body: { items: all.slice((page - 1) * pageSize, page * pageSize) } };
			},
			'page 2 gave again 1 records',
		],
	])(
		'failIfListChanges: a list whose %s throws PagesDoNotAddUpError',
		async (_name, serve, detail) => {
			const { client } = clientFor(serve);
			const failure = await readAllPages<number>(client, read({ failIfListChanges: true })).catch(
				(error: unknown) => error,
			);
			expect(failure).toBeInstanceOf(PagesDoNotAddUpError);
			expect((failure as PagesDoNotAddUpError).detail).toContain(detail);
			// Without the option, the same list is read on to its end, each record once.
			const records = await readAllPages<number>(clientFor(serve).client, read());
			expect(new Set(records).size).toBe(records.length);
			expect(records.length).toBeGreaterThanOrEqual(299);
		},
	);
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
		const context = {
			getNode: () => actionNode,
			getCredentials: async () => credentialWithToken(),
			helpers: {
				httpRequestWithAuthentication: async () => {
					throw Object.assign(new Error('HTTP 429'), {
						response: { status: 429, data: {}, headers: { 'retry-after': '5' } },
					});
				},
			},
		} as unknown as IExecuteFunctions;
		const client = new ServiceClient(context);
		const started = Date.now();
		const failure = await readAllPages<number>(client, read({ deadline: Date.now() + 1000 })).catch(
			(error: unknown) => error,
		);
		expect(Date.now() - started).toBeLessThan(1000);
		expect(failure).toMatchObject({ httpCode: '429' });
		if (ERRORS_TELL_N8N_HOW_LONG_TO_WAIT) {
			expect(failure).toMatchObject({ failure: { cause: 'rate-limited', retryAfterMs: 5000 } });
		}
	});
});
