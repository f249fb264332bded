import {
	ASSET_STATUSES,
	INVOICE_STATUSES,
	MAX_PAGE_SIZE,
} from '../../../nodes/InvoicingAssets/transport/contract';
import { DataStore } from '../../simulator/data';

describe('DataStore', () => {
	test('the same seed and counts give identical records; another seed differs', () => {
		const a = new DataStore({ invoices: 200, assets: 60, seed: 'x' });
		const b = new DataStore({ invoices: 200, assets: 60, seed: 'x' });
		const c = new DataStore({ invoices: 200, assets: 60, seed: 'y' });
		expect(JSON.stringify(b.invoices)).toBe(JSON.stringify(a.invoices));
		expect(JSON.stringify(b.assets)).toBe(JSON.stringify(a.assets));
		expect(JSON.stringify(c.invoices)).not.toBe(JSON.stringify(a.invoices));
	});

	test('by default 1,050 invoices and 300 assets, sorted by number and ID, with every status and every empty field', () => {
		const store = new DataStore({});
		expect(store.invoices).toHaveLength(1050);
		expect(store.assets).toHaveLength(300);
		const numbers = store.invoices.map((invoice) => invoice.invoiceNumber);
		expect([...numbers].sort()).toEqual(numbers);
		const ids = store.assets.map((asset) => asset.assetId);
		expect([...ids].sort()).toEqual(ids);
		// The tests of the nodes meet each status and each field left null (the contract's shapes
		// are the run-time contract check's).
		expect(new Set(store.invoices.map((invoice) => invoice.status))).toEqual(
			new Set(INVOICE_STATUSES),
		);
		expect(new Set(store.assets.map((asset) => asset.status))).toEqual(new Set(ASSET_STATUSES));
		const lines = store.invoices.flatMap((invoice) => invoice.lines);
		const nullSomewhere = [
			...(['dueDate', 'taxAmount'] as const).map((field) =>
				store.invoices.some((invoice) => invoice[field] === null),
			),
			...(['description', 'assetId'] as const).map((field) =>
				lines.some((line) => line[field] === null),
			),
			...(['serialNumber', 'model', 'site', 'contractEnd'] as const).map((field) =>
				store.assets.some((asset) => asset[field] === null),
			),
		];
		expect(nullSomewhere).toEqual(nullSomewhere.map(() => true));
	});

	test('every invoice has 1 to 4 lines billing assets of its own customer, or none', () => {
		const store = new DataStore({ invoices: 500, assets: 100 });
		let withAsset = 0;
		let withoutAsset = 0;
		for (const invoice of store.invoices) {
			expect(invoice.lines.length).toBeGreaterThanOrEqual(1);
			expect(invoice.lines.length).toBeLessThanOrEqual(4);
			const subtotal = invoice.lines.reduce((sum, line) => sum + line.amount, 0);
			expect(invoice.totalAmount).toBeCloseTo(subtotal + (invoice.taxAmount ?? 0), 1);
			for (const line of invoice.lines) {
				expect(line.amount).toBeCloseTo(line.quantity * line.unitPrice, 1);
				if (line.assetId === null) {
					withoutAsset++;
					continue;
				}
				withAsset++;
				expect(store.asset(line.assetId)?.customerNumber).toBe(invoice.customerNumber);
			}
		}
		// Most lines bill an asset; some bill none.
		expect(withAsset).toBeGreaterThan(withoutAsset);
		expect(withoutAsset).toBeGreaterThan(0);
	});

	// How fast 20,000 are made is a figure of `npm run bench` (simulator seeding), not a check here.
	test('0 records and 20,000 invoices both work', () => {
		const empty = new DataStore({ invoices: 0, assets: 0 });
		expect(empty.invoices).toEqual([]);
		expect(empty.listInvoices({}, 1, 20)).toEqual({
			items: [],
			page: 1,
			pageSize: 20,
			totalItems: 0,
		});
		const large = new DataStore({ invoices: 20000, assets: 2000 });
		expect(large.invoices).toHaveLength(20000);
		expect(large.invoices[19999].invoiceNumber).toBe('INV-0020000');
		expect(large.listInvoices({}, 200, MAX_PAGE_SIZE).items).toHaveLength(100);
		// No assets: lines still exist, without an asset.
		const noAssets = new DataStore({ invoices: 20, assets: 0 });
		expect(
			noAssets.invoices.flatMap((invoice) => invoice.lines).every((line) => line.assetId === null),
		).toBe(true);
	});

	test('refuses counts that are not whole numbers in range', () => {
		expect(() => new DataStore({ invoices: -1 })).toThrow(/invoices/);
		expect(() => new DataStore({ assets: 1.5 })).toThrow(/assets/);
	});

	test('issue: the next number, status issued, sorted in, frozen; duplicates refused', () => {
		const store = new DataStore({ invoices: 10, assets: 10 });
		const now = new Date(Date.UTC(2026, 5, 1, 12, 0, 0));
		const invoice = store.issue(now);
		expect(invoice).toMatchObject({
			invoiceNumber: 'INV-0000011',
			status: 'issued',
			issueDate: '2026-06-01T12:00:00Z',
			dueDate: '2026-07-01T12:00:00Z',
		});
		expect(store.issue(now).invoiceNumber).toBe('INV-0000012');
		expect(Object.isFrozen(invoice) && Object.isFrozen(invoice.lines[0])).toBe(true);

		const custom = store.issue(now, {
			invoiceNumber: 'AAA-1',
			status: 'paid',
			currency: 'CHF',
			totalAmount: undefined,
		});
		expect(store.invoices[0]).toBe(custom);
		expect(custom).toMatchObject({ status: 'paid', currency: 'CHF' });
		expect(typeof custom.totalAmount).toBe('number');
		expect(store.issue(now).invoiceNumber).toBe('INV-0000013');
		expect(() => store.issue(now, { invoiceNumber: 'AAA-1' })).toThrow(/already exists/);
		expect(() => store.issue(now, { status: 'lost' as 'paid' })).toThrow(/status/);

		const lines = store.issue(now, {
			lines: [{ quantity: 2, unitPrice: 10, assetId: 'AST-000001' }],
		}).lines;
		expect(lines).toEqual([
			{ description: null, quantity: 2, unitPrice: 10, amount: 20, assetId: 'AST-000001' },
		]);
	});

	test('an issued invoice marked overdue: status overdue, updatedAt moves on, listed as a change; only an issued one; paid after', () => {
		const store = new DataStore({ invoices: 10, assets: 10 });
		const issuedAt = new Date(Date.UTC(2026, 5, 1, 12, 0, 0));
		const issued = store.issue(issuedAt);
		const later = new Date(Date.UTC(2026, 6, 2, 8, 30, 15, 600));

		const overdue = store.markInvoiceOverdue(issued.invoiceNumber, later);
		expect(overdue).toEqual({ ...issued, status: 'overdue', updatedAt: '2026-07-02T08:30:15Z' });
		expect(store.invoice(issued.invoiceNumber)).toBe(overdue);
		expect(Object.isFrozen(overdue)).toBe(true);
		const changed = store.listInvoices({ updatedFrom: '2026-07-02T08:30:15Z' }, 1, 100);
		expect(changed.items).toEqual([overdue]);

		expect(() => store.markInvoiceOverdue(issued.invoiceNumber, later)).toThrow(
			/is overdue; only an issued invoice can become overdue/,
		);
		const paid = store.payInvoice(issued.invoiceNumber, new Date(later.getTime() + 60_000));
		expect([paid.status, paid.updatedAt]).toEqual(['paid', '2026-07-02T08:31:15Z']);
		const cancelled = store.cancelInvoice(store.issue(issuedAt).invoiceNumber, later);
		for (const invoice of [paid, cancelled]) {
			expect(() => store.markInvoiceOverdue(invoice.invoiceNumber, later)).toThrow(
				new RegExp(`is ${invoice.status}; only an issued invoice can become overdue`),
			);
		}
		expect(() => store.markInvoiceOverdue('INV-9999999', later)).toThrow(/not found/);
	});

	test('list filters and pages', () => {
		const store = new DataStore({ invoices: 300, assets: 80 });
		const paid = store.listInvoices({ status: 'paid' }, 1, 100);
		expect(paid.totalItems).toBe(
			store.invoices.filter((invoice) => invoice.status === 'paid').length,
		);
		expect(paid.items.every((invoice) => invoice.status === 'paid')).toBe(true);
		const second = store.listAssets({}, 2, 30);
		expect(second.items).toEqual(store.assets.slice(30, 60));
		expect(store.listAssets({ type: 'no-such-type' }, 1, 10).totalItems).toBe(0);
	});
});
