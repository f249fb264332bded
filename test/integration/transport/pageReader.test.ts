/* eslint-disable @n8n/community-nodes/no-restricted-globals */
/**
 * The page reader's rules over real HTTPS against the simulator, through a real n8n-core
 * context: what it asks for (the simulator's request log) and what it gives back.
 */
import { ServiceClient } from '../../../nodes/InvoicingAssets/transport';
import { paths, type Invoice } from '../../../nodes/InvoicingAssets/transport/contract';
import {
	ListReadError,
	PAGE_CONCURRENCY,
	PagesDoNotAddUpError,
	readAllPages,
	readPages,
	type ListPage,
	type ListRead,
} from '../../../nodes/InvoicingAssets/transport/pageReader';
import { loadOptionsContext, pageRequests, useTestbed } from '../action/helpers';

const INVOICES = 1050;
const bed = useTestbed({ invoices: INVOICES, assets: 10 });

const pause = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms));
const clientOf = () => new ServiceClient(loadOptionsContext(bed.testbed));
const invoices = (extra: Partial<ListRead> = {}): ListRead => ({ path: paths.invoices, ...extra });
const fullPages = (count: number) =>
	Array.from({ length: count }, (_, index) => ({ page: index + 1, pageSize: 100 }));
const numbersOf = (list: readonly Invoice[]) => list.map((invoice) => invoice.invoiceNumber);

/** Waits until no list request is on its way, so that a read that stopped is counted whole. */
async function settledListRequests(): Promise<number> {
	const { log } = bed.testbed.sim;
	let count = -1;
	while (count !== log.count('invoices.list') || log.inFlight('invoices.list') > 0) {
		count = log.count('invoices.list');
		await pause(200);
	}
	return count;
}

async function failureOf(read: ListRead): Promise<unknown> {
	const failure = await readAllPages<Invoice>(clientOf(), read).catch((error: unknown) => error);
	await settledListRequests();
	return failure;
}

afterEach(() => {
	bed.testbed.sim.setListPagingDeviation(undefined);
	bed.testbed.sim.setListShape({});
});

test.each([
	[137, fullPages(2)],
	[199, fullPages(2)],
	[250, fullPages(3)],
])('Limit %i: those records, from full pages cut to the Limit', async (limit, pages) => {
	const records = await readAllPages<Invoice>(clientOf(), invoices({ limit }));
	expect(records).toEqual(bed.testbed.sim.data.invoices().slice(0, limit));
	expect(pageRequests(bed.testbed)).toEqual(pages);
});

test('every record once, and the page that reaches the total is the last', async () => {
	const pages: Array<ListPage<Invoice>> = [];
	for await (const page of readPages<Invoice>(clientOf(), invoices())) pages.push(page);
	expect(pages.flatMap((page) => page.records)).toEqual(bed.testbed.sim.data.invoices());
	expect(pages.map((page) => page.endOfList)).toEqual([...Array(10).fill(false), true]);
	expect(pageRequests(bed.testbed)).toEqual(fullPages(11));
});

test('filters go with every page, e.g. the Polling Trigger’s updatedFrom and updatedTo', async () => {
	const all = bed.testbed.sim.data.invoices();
	const times = all.map((invoice) => invoice.updatedAt).sort();
	const [updatedFrom, updatedTo] = [times[100], times[900]];
	const records = await readAllPages<Invoice>(
		clientOf(),
		invoices({ qs: { updatedFrom, updatedTo } }),
	);
	const within = all.filter((i) => i.updatedAt >= updatedFrom && i.updatedAt <= updatedTo);
	expect(within.length).toBeGreaterThan(200);
	expect(numbersOf(records).sort()).toEqual(numbersOf(within).sort());
	for (const entry of bed.testbed.sim.log.entries({ route: 'invoices.list' })) {
		expect(entry.query).toMatchObject({ updatedFrom, updatedTo });
	}
});

test('a list whose totalItems is null is read on until a short page, never taken as complete after page 1', async () => {
	bed.testbed.sim.setListShape({ totalItems: 'null' });
	const pages: Array<ListPage<Invoice>> = [];
	for await (const page of readPages<Invoice>(clientOf(), invoices())) pages.push(page);
	expect(pages[0]).toMatchObject({ page: 1, totalItems: undefined, endOfList: false });
	expect(pages.flatMap((page) => page.records)).toEqual(bed.testbed.sim.data.invoices());
	expect(pages.at(-1)).toMatchObject({ page: 11, endOfList: true });
	expect(pageRequests(bed.testbed)).toEqual(fullPages(11));
	// Without a total the pages come one at a time.
	expect(bed.testbed.sim.log.peakInFlight('invoices.list')).toBe(1);
});

test('a page longer than asked for (the service ignores paging): a ListReadError after one request', async () => {
	bed.testbed.sim.setListPagingDeviation({ mode: 'ignore-paging' });
	const failure = await failureOf(invoices());
	expect(failure).toBeInstanceOf(ListReadError);
	expect(failure).not.toBeInstanceOf(PagesDoNotAddUpError);
	expect((failure as ListReadError).detail).toContain(
		`held ${INVOICES} records where 100 were asked for`,
	);
	expect(bed.testbed.sim.log.count('invoices.list')).toBe(1);
});

test('pages that do not add up (the service pages by 50): a PagesDoNotAddUpError after one request', async () => {
	bed.testbed.sim.setListPagingDeviation({ mode: 'max-page-size', maxPageSize: 50 });
	const failure = await failureOf(invoices());
	expect(failure).toBeInstanceOf(PagesDoNotAddUpError);
	expect((failure as Error).message).toBe(
		'The service’s pages do not add up, so the list would be incomplete',
	);
	expect((failure as PagesDoNotAddUpError).detail).toBe(
		`Page 1 held 50 records where 100 were asked for, though the service reports ${INVOICES} in all.`,
	);
	expect(bed.testbed.sim.log.count('invoices.list')).toBe(1);
});

describe('a first page shorter than asked, without a total, that fills the page size it reports', () => {
	test('is no list end when more follow at that size (the service pages by 50): a PagesDoNotAddUpError, never 50 records as the list', async () => {
		bed.testbed.sim.setListShape({ totalItems: 'null' });
		bed.testbed.sim.setListPagingDeviation({ mode: 'max-page-size', maxPageSize: 50 });
		const failure = await failureOf(invoices());
		expect(failure).toBeInstanceOf(PagesDoNotAddUpError);
		expect((failure as PagesDoNotAddUpError).detail).toBe(
			'Page 1 held 50 records where 100 were asked for, and the page after it at the page size of 50 the service reported holds more, though a short page should be the last.',
		);
		expect(pageRequests(bed.testbed)).toEqual([
			{ page: 1, pageSize: 100 },
			{ page: 2, pageSize: 50 },
		]);
	});

	test('is the whole list when nothing follows at that size: one request more, no error', async () => {
		const all = bed.testbed.sim.data.invoices();
		const updatedTo = all.map((invoice) => invoice.updatedAt).sort()[29];
		const within = all.filter((invoice) => invoice.updatedAt <= updatedTo);
		bed.testbed.sim.setListShape({ totalItems: 'null' });
		bed.testbed.sim.setListPagingDeviation({ mode: 'max-page-size', maxPageSize: within.length });
		const records = await readAllPages<Invoice>(clientOf(), invoices({ qs: { updatedTo } }));
		expect(numbersOf(records).sort()).toEqual(numbersOf(within).sort());
		expect(pageRequests(bed.testbed)).toEqual([
			{ page: 1, pageSize: 100 },
			{ page: 2, pageSize: within.length },
		]);
	});
});

test('a page of records given already (the service ignores page): a ListReadError within one round of pages', async () => {
	bed.testbed.sim.setListPagingDeviation({ mode: 'ignore-page', totalItems: 'reported' });
	const failure = await failureOf(invoices());
	expect(failure).toBeInstanceOf(ListReadError);
	expect((failure as ListReadError).detail).toContain('repeated records that earlier pages');
	expect(bed.testbed.sim.log.count('invoices.list')).toBeLessThanOrEqual(1 + PAGE_CONCURRENCY);
});

describe('a list that shifts while it is read', () => {
	afterEach(() => {
		bed.testbed.sim.seed({ invoices: INVOICES, assets: 10 });
	});

	/** Reads while an invoice that sorts first is issued once page 1 is answered. */
	async function readWhileShifting(read: ListRead) {
		const { sim } = bed.testbed;
		sim.faults.add({ route: 'invoices.list', latencyMs: 300 });
		const reading = readAllPages<Invoice>(clientOf(), read).catch((error: unknown) => error);
		while (sim.log.count('invoices.list', { status: 200 }) === 0) await pause(5);
		sim.issueInvoice({ invoiceNumber: 'INV-0000000' });
		const outcome = await reading;
		await settledListRequests();
		return outcome;
	}

	test('gives each record once', async () => {
		const before = numbersOf(bed.testbed.sim.data.invoices());
		const records = (await readWhileShifting(invoices())) as Invoice[];
		expect(numbersOf(records)).toEqual(before);
	});

	test('with failIfListChanges: a PagesDoNotAddUpError the Polling Trigger can catch', async () => {
		const failure = await readWhileShifting(invoices({ failIfListChanges: true }));
		expect(failure).toBeInstanceOf(PagesDoNotAddUpError);
		expect((failure as PagesDoNotAddUpError).detail).toContain(
			`an earlier page reported ${INVOICES} records in all, page 2 reports ${INVOICES + 1}`,
		);
	});
});

test('a caller that stops between pages: no request after the few already on their way', async () => {
	for await (const page of readPages<Invoice>(clientOf(), invoices())) {
		if (page.page === 2) break;
	}
	const asked = await settledListRequests();
	expect(asked).toBeLessThanOrEqual(2 + 2 * PAGE_CONCURRENCY);
	await pause(300);
	expect(bed.testbed.sim.log.count('invoices.list')).toBe(asked);
});
