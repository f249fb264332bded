import type { Agent } from 'undici';

import {
	ASSET_STATUSES,
	INVOICE_STATUSES,
	MAX_PAGE_SIZE,
	paths,
	type Asset,
	type Invoice,
} from '../../../nodes/InvoicingAssets/transport/contract';
import { TIMESTAMP_PATTERN } from '../../simulator/contract';
import { readPage } from '../../../nodes/InvoicingAssets/transport/responses';
import {
	ASSET_FIELDS,
	DEFAULT_PAGE_SIZE,
	INVOICE_FIELDS,
	INVOICE_LINE_FIELDS,
	startSimulator,
	type Simulator,
} from '../../simulator';
import { call, createAgent, fetchToken } from './helpers';

let sim: Simulator;
let agent: Agent;
let token: string;

beforeAll(async () => {
	sim = await startSimulator();
	agent = createAgent(sim);
	token = await fetchToken(agent, sim);
});

afterAll(async () => {
	await agent.close();
	await sim.close();
});

const get = (path: string) => call(agent, `${sim.serviceUrl}${path}`, { token });
const query = (params: Record<string, string | number>) =>
	new URLSearchParams(
		Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]),
	).toString();
const invoicePage = (params: Record<string, string | number> = {}) =>
	get(`${paths.invoices}?${query(params)}`);
const assetPage = (params: Record<string, string | number> = {}) =>
	get(`${paths.assets}?${query(params)}`);

async function allPages<T>(
	fetchPage: (params: Record<string, string | number>) => ReturnType<typeof get>,
	params: Record<string, string | number> = {},
): Promise<T[]> {
	const items: T[] = [];
	for (let page = 1; ; page++) {
		const response = await fetchPage({ ...params, page, pageSize: MAX_PAGE_SIZE });
		expect(response.status).toBe(200);
		const body = readPage<T>(response.text);
		if (!body) throw new Error(`No page envelope: ${response.text}`);
		items.push(...body.items);
		if (body.items.length < MAX_PAGE_SIZE) return items;
	}
}

describe('get one', () => {
	test('an invoice and an asset as stored', async () => {
		const invoice = sim.data.invoices()[17];
		const response = await get(paths.invoice(invoice.invoiceNumber));
		expect(response.status).toBe(200);
		expect(response.headers['content-type']).toBe('application/json');
		expect(response.json).toEqual(invoice);
		const asset = sim.data.assets()[42];
		const assetResponse = await get(paths.asset(asset.assetId));
		expect(assetResponse.status).toBe(200);
		expect(assetResponse.json).toEqual(asset);
	});

	test('unknown ids are 404 not_found with the id in the message', async () => {
		const invoice = await get(paths.invoice('INV-9999999'));
		expect(invoice.status).toBe(404);
		expect(invoice.json).toEqual({
			code: 'not_found',
			message: "Invoice 'INV-9999999' was not found.",
			details: null,
		});
		const asset = await get(paths.asset('AST-999999'));
		expect(asset.status).toBe(404);
		expect(asset.json).toEqual({
			code: 'not_found',
			message: "Asset 'AST-999999' was not found.",
			details: null,
		});
	});

	test('a deleted asset answers 404 and leaves the list; the invoices billing it keep their lines', async () => {
		const billing = sim.data
			.invoices()
			.find((invoice) => invoice.lines.some((line) => line.assetId));
		const assetId = billing?.lines.find((line) => line.assetId)?.assetId as string;
		const before = await allPages<Asset>(assetPage);
		expect((await get(paths.asset(assetId))).status).toBe(200);

		expect(sim.deleteAsset(assetId)).toBe(true);
		expect(sim.deleteAsset(assetId)).toBe(false);
		const gone = await get(paths.asset(assetId));
		expect(gone.status).toBe(404);
		expect(gone.json).toMatchObject({ code: 'not_found' });
		const after = await allPages<Asset>(assetPage);
		expect(after.map((asset) => asset.assetId)).toEqual(
			before.map((asset) => asset.assetId).filter((id) => id !== assetId),
		);
		const invoice = await get(paths.invoice(String(billing?.invoiceNumber)));
		expect(invoice.json).toEqual(billing);
		sim.seed();
		expect((await get(paths.asset(assetId))).status).toBe(200);
	});

	test("'../x' stays a 404 on the invoice route", async () => {
		sim.log.reset();
		const response = await get(paths.invoice('../x'));
		expect(response.status).toBe(404);
		expect(response.json.message).toBe("Invoice '../x' was not found.");
		expect(sim.log.entries()).toEqual([
			expect.objectContaining({
				route: 'invoices.get',
				path: '/invoice/v1/invoices/..%2Fx',
				params: { invoiceNumber: '../x' },
				status: 404,
			}),
		]);
	});

	test('path values are decoded exactly once', async () => {
		const outsidePattern = {
			deviation: 'an invoice number outside the contract pattern, to test encoding',
		};
		const special = sim.issueInvoice({ invoiceNumber: 'INV/2025 #1 ü?' }, outsidePattern).invoice;
		const literal = sim.issueInvoice({ invoiceNumber: 'A%2FB' }, outsidePattern).invoice;
		await sim.waitForDeliveries();

		const found = await get(paths.invoice(special.invoiceNumber));
		expect(found.status).toBe(200);
		expect(found.json.invoiceNumber).toBe('INV/2025 #1 ü?');

		const literalFound = await get(paths.invoice('A%2FB'));
		expect(paths.invoice('A%2FB')).toBe('/invoice/v1/invoices/A%252FB');
		expect(literalFound.status).toBe(200);
		expect(literalFound.json).toEqual(literal);

		sim.log.reset();
		const decodedOnce = await get('/invoice/v1/invoices/A%2FB');
		expect(decodedOnce.status).toBe(404);
		expect(decodedOnce.json.message).toBe("Invoice 'A/B' was not found.");
		const doubleEncoded = await get(
			`/invoice/v1/invoices/${encodeURIComponent(paths.invoice(special.invoiceNumber).split('/').pop() as string)}`,
		);
		expect(doubleEncoded.status).toBe(404);
		expect(doubleEncoded.json.message).toContain('INV%2F2025');
		expect(sim.log.entries().map((entry) => entry.params.invoiceNumber)).toEqual([
			'A/B',
			'INV%2F2025%20%231%20%C3%BC%3F',
		]);
	});

	test('a path that is not valid percent-encoding is a 400', async () => {
		const response = await get('/invoice/v1/invoices/%E0%A4%A');
		expect(response.status).toBe(400);
		expect(response.json.code).toBe('invalid_path');
	});

	test('unencoded slashes and unknown paths are unknown routes (404)', async () => {
		sim.log.reset();
		const nested = await get('/invoice/v1/invoices/a/b');
		expect(nested.status).toBe(404);
		const other = await get('/invoice/v2/invoices');
		expect(other.status).toBe(404);
		expect(other.json).toEqual({ code: 'not_found', message: 'No such endpoint.', details: null });
		expect(sim.log.count('unknown')).toBe(2);
	});
});

describe('fields', () => {
	test('every invoice and asset has every contract field, null never omitted', async () => {
		const invoices = await allPages<Invoice>(invoicePage);
		const assets = await allPages<Asset>(assetPage);
		expect(invoices).toHaveLength(sim.data.invoices().length);
		expect(assets).toHaveLength(300);
		for (const invoice of invoices) {
			expect(Object.keys(invoice).sort()).toEqual([...INVOICE_FIELDS].sort());
			for (const line of invoice.lines) {
				expect(Object.keys(line).sort()).toEqual([...INVOICE_LINE_FIELDS].sort());
			}
			expect(INVOICE_STATUSES).toContain(invoice.status);
			expect(invoice.issueDate).toMatch(TIMESTAMP_PATTERN);
			expect(invoice.updatedAt).toMatch(TIMESTAMP_PATTERN);
			if (invoice.dueDate !== null) expect(invoice.dueDate).toMatch(TIMESTAMP_PATTERN);
		}
		for (const asset of assets) {
			expect(Object.keys(asset).sort()).toEqual([...ASSET_FIELDS].sort());
			expect(ASSET_STATUSES).toContain(asset.status);
			expect(asset.updatedAt).toMatch(TIMESTAMP_PATTERN);
			if (asset.contractEnd !== null) expect(asset.contractEnd).toMatch(TIMESTAMP_PATTERN);
		}
		// Each nullable field is null somewhere, and present (as null) there.
		const lines = invoices.flatMap((invoice) => invoice.lines);
		expect(invoices.some((invoice) => invoice.dueDate === null)).toBe(true);
		expect(invoices.some((invoice) => invoice.taxAmount === null)).toBe(true);
		expect(lines.some((line) => line.description === null)).toBe(true);
		expect(lines.some((line) => line.assetId === null)).toBe(true);
		for (const field of ['serialNumber', 'model', 'site', 'contractEnd'] as const) {
			expect([field, assets.some((asset) => asset[field] === null)]).toEqual([field, true]);
		}
		// Every status shows up.
		expect(new Set(invoices.map((invoice) => invoice.status))).toEqual(new Set(INVOICE_STATUSES));
		expect(new Set(assets.map((asset) => asset.status))).toEqual(new Set(ASSET_STATUSES));
	});
});

describe('pagination', () => {
	test('defaults to page 1 of 20, sorted by invoice number', async () => {
		const response = await invoicePage();
		expect(response.status).toBe(200);
		expect(response.json.page).toBe(1);
		expect(response.json.pageSize).toBe(DEFAULT_PAGE_SIZE);
		expect(response.json.totalItems).toBe(sim.data.invoices().length);
		expect(response.json.items).toEqual(sim.data.invoices().slice(0, DEFAULT_PAGE_SIZE));
	});

	test('walking every page gives each record once, in order; the last page is short', async () => {
		const invoices = await allPages<Invoice>(invoicePage);
		expect(invoices.map((invoice) => invoice.invoiceNumber)).toEqual(
			sim.data.invoices().map((invoice) => invoice.invoiceNumber),
		);
		const total = sim.data.invoices().length;
		const lastPage = Math.ceil(total / MAX_PAGE_SIZE);
		const last = await invoicePage({ page: lastPage, pageSize: MAX_PAGE_SIZE });
		expect(last.json.items).toHaveLength(total - (lastPage - 1) * MAX_PAGE_SIZE);
		expect(last.json.items.length).toBeLessThan(MAX_PAGE_SIZE);
	});

	test('a page beyond the end is empty', async () => {
		const response = await invoicePage({ page: 9999, pageSize: 10 });
		expect(response.status).toBe(200);
		expect(response.json).toEqual({
			items: [],
			page: 9999,
			pageSize: 10,
			totalItems: sim.data.invoices().length,
		});
	});

	test('exactly 100 records: one full page, then an empty one; 101: one more', async () => {
		try {
			sim.seed({ invoices: 100, assets: 20 });
			const first = await invoicePage({ page: 1, pageSize: 100 });
			expect(first.json.items).toHaveLength(100);
			expect(first.json.totalItems).toBe(100);
			expect((await invoicePage({ page: 2, pageSize: 100 })).json.items).toEqual([]);

			sim.seed({ invoices: 101, assets: 20 });
			expect((await invoicePage({ page: 1, pageSize: 100 })).json.items).toHaveLength(100);
			const second = await invoicePage({ page: 2, pageSize: 100 });
			expect(second.json.items).toHaveLength(1);
			expect(second.json.items[0].invoiceNumber).toBe(sim.data.invoices()[100].invoiceNumber);
			expect(second.json.totalItems).toBe(101);
		} finally {
			sim.seed({ invoices: 1050, assets: 300 });
		}
	});

	test.each([
		['pageSize', 0],
		['pageSize', 101],
		['pageSize', -1],
		['pageSize', 'ten'],
		['pageSize', '1.5'],
		['page', 0],
		['page', 'first'],
	])('%s=%j is a 400 invalid_parameter naming it', async (name, value) => {
		const response = await invoicePage({ [name]: value });
		expect(response.status).toBe(400);
		expect(response.json.code).toBe('invalid_parameter');
		expect(response.json.message).toContain(`'${name}'`);
		expect(response.json.details).toEqual({ parameter: name });
	});

	test('pageSize 1 and 100 are accepted', async () => {
		expect((await invoicePage({ pageSize: 1 })).json.items).toHaveLength(1);
		expect((await assetPage({ pageSize: 100 })).json.items).toHaveLength(100);
	});

	test('a repeated parameter is a 400; unknown ones are ignored', async () => {
		const repeated = await get(`${paths.invoices}?page=1&page=2`);
		expect(repeated.status).toBe(400);
		expect(repeated.json.details).toEqual({ parameter: 'page' });
		const unknown = await invoicePage({ colour: 'blue', pageSize: 5 });
		expect(unknown.status).toBe(200);
		expect(unknown.json.items).toEqual(sim.data.invoices().slice(0, 5));
	});
});

describe('filters', () => {
	test('status, customerNumber and an inclusive issue-date range', async () => {
		const all = sim.data.invoices();
		const overdue = await allPages<Invoice>(invoicePage, { status: 'overdue' });
		expect(overdue.length).toBeGreaterThan(0);
		expect(overdue).toEqual(all.filter((invoice) => invoice.status === 'overdue'));

		const customer = all[10].customerNumber;
		const mine = await allPages<Invoice>(invoicePage, { customerNumber: customer });
		expect(mine).toEqual(all.filter((invoice) => invoice.customerNumber === customer));

		const issuedFrom = all[100].issueDate;
		const issuedTo = all[149].issueDate;
		const range = await allPages<Invoice>(invoicePage, { issuedFrom, issuedTo });
		expect(range.map((invoice) => invoice.invoiceNumber)).toEqual(
			all.slice(100, 150).map((invoice) => invoice.invoiceNumber),
		);

		const combined = await allPages<Invoice>(invoicePage, { issuedFrom, status: 'paid' });
		expect(combined).toEqual(
			all.filter((invoice) => invoice.issueDate >= issuedFrom && invoice.status === 'paid'),
		);
	});

	test('a filter that matches nothing gives an empty page', async () => {
		const response = await invoicePage({ customerNumber: 'CUST-00000' });
		expect(response.status).toBe(200);
		expect(response.json).toEqual({
			items: [],
			page: 1,
			pageSize: DEFAULT_PAGE_SIZE,
			totalItems: 0,
		});
	});

	test.each([
		['issuedFrom', '2025-01-01'],
		['issuedFrom', '2025-01-01T00:00:00.000Z'],
		['issuedTo', '2025-02-30T00:00:00Z'],
		['issuedTo', 'yesterday'],
		['status', 'unpaid'],
	])('%s=%j is a 400 invalid_parameter naming it', async (name, value) => {
		const response = await invoicePage({ [name]: value });
		expect(response.status).toBe(400);
		expect(response.json.code).toBe('invalid_parameter');
		expect(response.json.message).toContain(`'${name}'`);
	});

	test('issuedFrom after issuedTo is a 400', async () => {
		const response = await invoicePage({
			issuedFrom: '2025-06-01T00:00:00Z',
			issuedTo: '2025-01-01T00:00:00Z',
		});
		expect(response.status).toBe(400);
		expect(response.json.details).toEqual({ parameter: 'issuedFrom' });
	});

	test('asset filters', async () => {
		const all = sim.data.assets();
		const sample = all.find((asset) => asset.site !== null && asset.serialNumber !== null) as Asset;
		const cases: Array<[Record<string, string>, (asset: Asset) => boolean]> = [
			[{ status: 'retired' }, (asset) => asset.status === 'retired'],
			[{ type: sample.type }, (asset) => asset.type === sample.type],
			[{ site: sample.site as string }, (asset) => asset.site === sample.site],
			[
				{ customerNumber: sample.customerNumber },
				(asset) => asset.customerNumber === sample.customerNumber,
			],
			[
				{ serialNumber: sample.serialNumber as string },
				(asset) => asset.serialNumber === sample.serialNumber,
			],
			[
				{ type: sample.type, status: 'active' },
				(asset) => asset.type === sample.type && asset.status === 'active',
			],
		];
		for (const [filter, predicate] of cases) {
			const expected = all.filter(predicate);
			expect(expected.length).toBeGreaterThan(0);
			expect(await allPages<Asset>(assetPage, filter)).toEqual(expected);
		}
		const bad = await assetPage({ status: 'broken' });
		expect(bad.status).toBe(400);
		expect(bad.json.details).toEqual({ parameter: 'status' });
	});
});
