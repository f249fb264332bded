/* eslint-disable @n8n/community-nodes/no-restricted-globals */
import { PAGE_CONCURRENCY } from '../../../nodes/InvoicingAssets/transport/pageReader';
import type { ListPagingDeviation } from '../../simulator';
import { jsonOf, pageRequests, run, useTestbed, withEveryRequestAnswered } from './helpers';

const bed = useTestbed({ invoices: 1050, assets: 5 });

const getMany = (parameters = {}) => ({ resource: 'invoice', operation: 'getAll', ...parameters });
const PAGES_DIFFER =
	'The service pages this list differently from the contract, so the node cannot read it whole';

afterEach(() => {
	bed.testbed.sim.setListPagingDeviation(undefined);
});

/** Return All against a list that pages differently: the error, and how many pages were asked for. */
async function returnAllUnder(deviation: ListPagingDeviation) {
	const { testbed } = bed;
	testbed.sim.setListPagingDeviation(deviation);
	const { outcome: result, requests } = await withEveryRequestAnswered(
		testbed,
		'invoices.list',
		async () => await run(testbed, getMany({ returnAll: true })),
	);
	return { result, requests };
}

describe('Get Many against a list that pages differently from the contract', () => {
	test('a list that ignores page and pageSize (whole list, totalItems null): a clear error after one request', async () => {
		const { result, requests } = await returnAllUnder({ mode: 'ignore-paging' });

		expect(result.error?.message).toBe(PAGES_DIFFER);
		expect(result.error?.description).toContain('1050 records where 100 were asked for');
		expect(result.items).toEqual([]);
		expect(requests).toBe(1);
	});

	test('a list that ignores page but reports its total: a clear error within one round of parallel pages', async () => {
		const { result, requests } = await returnAllUnder({
			mode: 'ignore-page',
			totalItems: 'reported',
		});

		expect(result.error?.message).toBe(PAGES_DIFFER);
		expect(result.error?.description).toContain('repeated records that earlier pages had given');
		expect(result.items).toEqual([]);
		expect(requests).toBeLessThanOrEqual(1 + PAGE_CONCURRENCY);
	});

	test('a list that ignores page with totalItems null: a clear error at the second page', async () => {
		const { result, requests } = await returnAllUnder({ mode: 'ignore-page', totalItems: 'null' });

		expect(result.error?.message).toBe(PAGES_DIFFER);
		expect(requests).toBe(2);
	});

	test('pages shorter than asked before the total (the service pages by 50): a clear error, never a shorter list', async () => {
		const { result, requests } = await returnAllUnder({ mode: 'max-page-size', maxPageSize: 50 });

		expect(result.error?.message).toBe(
			'The service’s pages do not add up, so the list would be incomplete',
		);
		expect(result.error?.description).toContain(
			'Page 1 held 50 records where 100 were asked for, though the service reports 1050 in all.',
		);
		expect(result.items).toEqual([]);
		expect(requests).toBe(1);
	});

	test('a page that is not a page of records: a clear error, never the pages before it as the list', async () => {
		const { testbed } = bed;
		testbed.sim.faults.add({
			route: 'invoices.list',
			status: 200,
			body: { data: [] },
			skip: 1,
			times: 1,
		});
		const { outcome: result } = await withEveryRequestAnswered(
			testbed,
			'invoices.list',
			async () => await run(testbed, getMany({ returnAll: true })),
		);

		expect(result.error?.message).toBe(
			'The service answered a list request with an unexpected shape',
		);
		expect(result.items).toEqual([]);
	});

	test('a Limit that the first answer covers still gets the right records, each once', async () => {
		const { testbed } = bed;
		testbed.sim.setListPagingDeviation({ mode: 'ignore-paging' });
		const result = await run(testbed, getMany({ returnAll: false, limit: 30 }));

		expect(result.error).toBeUndefined();
		expect(jsonOf(result)).toEqual(testbed.sim.data.invoices().slice(0, 30));
		expect(testbed.sim.log.count('invoices.list')).toBe(1);
	});
});

test('a list that shifts while it is read gives each record once', async () => {
	const { testbed } = bed;
	const before = testbed.sim.data.invoices().map((invoice) => invoice.invoiceNumber);
	// Each page takes 300 ms. Once the first page is answered, an invoice that sorts first is
	// issued, so every later page starts one record earlier: page 2 repeats page 1's last record.
	testbed.sim.faults.add({ route: 'invoices.list', latencyMs: 300 });
	const running = run(testbed, getMany({ returnAll: true }));
	while (testbed.sim.log.count('invoices.list', { status: 200 }) === 0) {
		await new Promise((resolve) => setTimeout(resolve, 5));
	}
	const inserted = testbed.sim.issueInvoice({ invoiceNumber: 'INV-0000000' }).invoice;
	const result = await running;

	expect(result.error).toBeUndefined();
	const numbers = jsonOf(result).map((invoice: { invoiceNumber: string }) => invoice.invoiceNumber);
	expect(new Set(numbers).size).toBe(numbers.length);
	expect(numbers).toEqual(before);
	expect(numbers).not.toContain(inserted.invoiceNumber);
	expect(pageRequests(testbed).map((page) => page.page)).toEqual(
		Array.from({ length: 11 }, (_, index) => index + 1),
	);
});
