import type { IDataObject } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { FIRST_PAGE, MAX_PAGE_SIZE, pageQuery, SERVICE_TIME_HEADER, type Page } from './contract';
import type { ServiceClient } from './index';
import { listRecordKey, readHeader, readHttpDate, readPage } from './responses';

/** How many pages of one list are asked for at the same time once its total is known. */
export const PAGE_CONCURRENCY = 4;

/** What reading a list takes of the ServiceClient: its requests, and its node to name in errors. */
export type ListClient = Pick<ServiceClient, 'requestFull' | 'getNode'>;

export interface ListRead {
	/** The list, e.g. `paths.invoices`. */
	path: string;
	/** Its filters, e.g. `{ updatedFrom, updatedTo }`; `page` and `pageSize` are the reader's. */
	qs?: IDataObject;
	/** At most this many records; every record when undefined. */
	limit?: number;
	/** The records a page is asked for: by default MAX_PAGE_SIZE, or the Limit when less. */
	pageSize?: number;
	/** The page to start at (a list search's "load more"); FIRST_PAGE when undefined. */
	startPage?: number;
	/**
	 * How many pages may be on their way at once (PAGE_CONCURRENCY when undefined). 1 asks for
	 * each page only when the caller comes for it, for a caller that may stop at any page and
	 * wants no request wasted.
	 */
	pagesInFlight?: number;
	itemIndex?: number;
	/** Epoch ms by which the read should be done: no retry of a page waits past it (ServiceRequest). */
	deadline?: number;
	/**
	 * The total an earlier read of the list reported (e.g. of its first page, read alone): the
	 * pages up to it are asked for at once, `pagesInFlight` at a time, from `startPage` on.
	 */
	totalItems?: number;
}

export interface ListPage<T> {
	/** The records of this page the read had not given yet, in the service's order, cut to the Limit. */
	records: T[];
	/** The page it was asked for. */
	page: number;
	/** The total this page reported; undefined when it said `null` or nothing. */
	totalItems: number | undefined;
	/** The list ends here (a short page, or the page that reaches the total): nothing after it is unread. */
	endOfList: boolean;
	/** How many records of this page an earlier page of the read had given (dropped from `records`). */
	repeated: number;
	/** The service's clock when it answered this page (its Date header, epoch ms), when it said. */
	answeredAt: number | undefined;
}

/**
 * How the answers of a list are read: the contract's page envelope, unless the list answers
 * otherwise (the subscription list: SubscriptionList in contract.ts).
 */
export interface ListForm<T> {
	/** The answer to the request for `page`, as a page; undefined when it is none. */
	readPage: (body: unknown, page: number) => Page<T> | undefined;
	/** The error of an answer that is no page: its message, and its description for `page`. */
	unreadable: { message: string; description: (page: number) => string };
}

function envelope<T>(): ListForm<T> {
	return {
		readPage: (body) => readPage<T>(body),
		unreadable: {
			message: 'The service answered a list request with an unexpected shape',
			description: (page) =>
				`Page ${page} is not a page of records: expected an object with an "items" array. The Data Service’s list format may have changed; please report this.`,
		},
	};
}

/**
 * A list the node cannot read whole by the contract: the service pages it differently (it
 * ignores `page` or `pageSize`, or answers what is not a page), so reading on would never end or
 * repeat records.
 */
export class ListReadError extends NodeOperationError {}

/**
 * The pages of a list do not add up: a short page came before the total it reports. Records may
 * be missing from what was read; reading again, or a narrower filter, may succeed.
 */
export class PagesDoNotAddUpError extends ListReadError {}

/**
 * Reads a list page by page: the one page loop of the package (Get Many, the subscription list,
 * list search, the Polling Trigger). Consume it with `for await`; the caller may stop between pages.
 *
 * - **Pages**: full pages of MAX_PAGE_SIZE (a Limit below it asks for just that many), cut to
 *   the Limit. Each record is given once, in page order; a record a shifted list gives again is
 *   dropped.
 * - **The last page** is a short page, or the page that reaches the reported `totalItems`.
 * - **Speed**: once a page reports the total, the pages up to it (or to the Limit) are asked for
 *   `pagesInFlight` at a time, and at most twice that many pages are held ahead of the caller;
 *   without a total, one at a time. A caller that stops asks for nothing more; the pages still in
 *   flight are dropped.
 * - **Errors**: an HTTP failure is the request's NodeApiError. A list that pages differently
 *   from the contract is a ListReadError after a bounded number of requests, never an endless or
 *   silently partial read; pages that do not add up are a PagesDoNotAddUpError.
 */
export async function* readPages<T>(
	client: ListClient,
	read: ListRead,
	form: ListForm<T> = envelope<T>(),
): AsyncGenerator<ListPage<T>, void, undefined> {
	const wanted = read.limit ?? Number.POSITIVE_INFINITY;
	if (wanted <= 0) return;
	const node = client.getNode();
	const startPage = read.startPage ?? FIRST_PAGE;
	const pageSize = read.pageSize ?? Math.min(MAX_PAGE_SIZE, wanted);
	const pagesInFlight = Math.max(1, read.pagesInFlight ?? PAGE_CONCURRENCY);
	const readsAhead = pagesInFlight > 1;
	const queue: Array<{
		page: number;
		answer: Promise<{ list: Page<T>; answeredAt: number | undefined }>;
	}> = [];
	// From `from`, up to the total's last page (or the Limit's, if sooner); without a total,
	// `from` alone: no page is asked for in vain.
	const planFrom = (from: number, remaining: number, total: number | undefined) =>
		Math.max(
			from,
			Math.min(
				from - 1 + Math.ceil(remaining / pageSize),
				total === undefined ? from : FIRST_PAGE - 1 + Math.ceil(total / pageSize),
			),
		);
	let nextPage = startPage;
	let lastPlanned = planFrom(startPage, wanted, read.totalItems);
	let inFlight = 0;
	let stopped = false;

	const seen = new Set<string>();
	let given = 0;
	let knownTotal: number | undefined = read.totalItems;
	const { itemIndex } = read;
	const pagedOtherwise = (detail: string) =>
		new ListReadError(
			node,
			'The service pages this list differently from the contract, so the node cannot read it whole',
			{
				description: `${detail} Rather than read on without end or return repeated records as the list, the node stopped. The package’s assumptions about the service’s paging are listed in docs/service-contract.md in its repository; please report this.`,
				itemIndex,
			},
		);
	const doNotAddUp = (detail: string) =>
		new PagesDoNotAddUpError(
			node,
			'The service’s pages do not add up, so the list would be incomplete',
			{
				description: `${detail} The node stopped rather than return part of the list. The service’s paging may differ from what this node assumes (see docs/service-contract.md in the package’s repository); please report it.`,
				itemIndex,
			},
		);

	// Checked as each page arrives, in any order, so that a service that ignores `page` costs
	// no more than the pages already on their way.
	const arrived = new Set<string>();
	const readArrivedPage = (page: number, body: unknown): Page<T> => {
		const list = form.readPage(body, page);
		if (!list) {
			throw new ListReadError(node, form.unreadable.message, {
				description: form.unreadable.description(page),
				itemIndex,
			});
		}
		const keys = list.items.map((record) => listRecordKey(read.path, record));
		const unseen = keys.filter((key) => !arrived.has(key));
		for (const key of keys) arrived.add(key);
		if (keys.length > 0 && unseen.length === 0) {
			throw pagedOtherwise(
				`Page ${page} repeated records that earlier pages had given already, so the service seems to ignore the “page” argument.`,
			);
		}
		return list;
	};

	const fill = () => {
		while (
			!stopped &&
			nextPage <= lastPlanned &&
			inFlight < pagesInFlight &&
			queue.length < 2 * pagesInFlight
		) {
			const page = nextPage++;
			const answer = client
				.requestFull({
					method: 'GET',
					path: read.path,
					qs: { ...read.qs, ...pageQuery(page, pageSize) },
					itemIndex,
					deadline: read.deadline,
				})
				.then((response) => ({
					list: readArrivedPage(page, response.body),
					answeredAt: readHttpDate(readHeader(response.headers, SERVICE_TIME_HEADER)),
				}));
			inFlight += 1;
			// A failed page stops the plan. Handling it here also keeps a page the caller never
			// reaches from becoming an unhandled rejection.
			answer.then(
				() => {
					inFlight -= 1;
					if (readsAhead) fill();
				},
				() => {
					inFlight -= 1;
					stopped = true;
				},
			);
			queue.push({ page, answer });
		}
	};

	try {
		fill();
		while (queue.length > 0) {
			const { page, answer } = queue.shift() as (typeof queue)[number];
			const { list, answeredAt } = await answer;
			const { items } = list;
			const totalItems = list.totalItems ?? undefined;

			const fresh: T[] = [];
			for (const record of items) {
				const key = listRecordKey(read.path, record);
				if (seen.has(key)) continue;
				seen.add(key);
				fresh.push(record);
			}
			const readSoFar = (page - FIRST_PAGE) * pageSize + items.length;
			if (items.length < pageSize && totalItems !== undefined && readSoFar < totalItems) {
				throw doNotAddUp(
					`Page ${page} held ${items.length} records where ${pageSize} were asked for, though the service reports ${totalItems} in all.`,
				);
			}
			knownTotal = totalItems ?? knownTotal;

			const records = fresh.slice(0, wanted - given);
			given += records.length;
			const endOfList =
				items.length < pageSize || (totalItems !== undefined && readSoFar >= totalItems);
			if (items.length > pageSize && given < wanted && !endOfList) {
				throw pagedOtherwise(
					`Page ${page} held ${items.length} records where ${pageSize} were asked for, without a total that says it holds them all, so the service seems to ignore the “page” and “pageSize” arguments.`,
				);
			}
			const done = endOfList || given >= wanted;
			if (done) {
				stopped = true;
			} else {
				lastPlanned = planFrom(page + 1, wanted - given, knownTotal);
				if (readsAhead) fill();
			}
			yield {
				records,
				page,
				totalItems,
				endOfList,
				repeated: items.length - fresh.length,
				answeredAt,
			};
			if (done) return;
			fill();
		}
	} finally {
		stopped = true;
	}
}

/** Every record of a list, or its first `limit` (Get Many). */
export async function readAllPages<T>(
	client: ServiceClient,
	read: ListRead,
	form: ListForm<T> = envelope<T>(),
): Promise<T[]> {
	const records: T[] = [];
	for await (const page of readPages<T>(client, read, form)) records.push(...page.records);
	return records;
}
