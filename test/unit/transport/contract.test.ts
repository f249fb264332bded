import {
	ASSET_ID_PATTERN,
	INVOICE_NUMBER_PATTERN,
	fitsOnePathSegment,
	pageQuery,
	paths,
	toServiceTimestamp,
} from '../../../nodes/InvoicingAssets/transport/contract';

describe('paths', () => {
	test('an identifier is always one encoded path segment', () => {
		expect(paths.invoice('../x')).toBe('/invoice/v1/invoices/..%2Fx');
		expect(paths.invoice('INV 1/2?#')).toBe('/invoice/v1/invoices/INV%201%2F2%3F%23');
		expect(paths.asset('%2e%2e')).toBe('/asset/v1/assets/%252e%252e');
		expect(paths.subscription('a/b')).toBe('/subscription/v1/subscription/a%2Fb');
		for (const value of ['../x', 'a/b/c', '?x=1', '#frag', '%2F']) {
			const path = paths.invoice(value);
			const segment = path.slice('/invoice/v1/invoices/'.length);
			expect(segment).not.toMatch(/[/?#]/);
			expect(decodeURIComponent(segment)).toBe(value);
		}
	});

	test('"." and ".." cannot be one path segment, anything else can', () => {
		expect(fitsOnePathSegment('.')).toBe(false);
		expect(fitsOnePathSegment('..')).toBe(false);
		for (const value of ['...', '../x', '.x', 'INV-1', '%2e%2e']) {
			expect(fitsOnePathSegment(value)).toBe(true);
		}
	});

	test('the identifier patterns accept the usual shapes and refuse paths', () => {
		const invoiceNumber = new RegExp(`^${INVOICE_NUMBER_PATTERN}$`);
		for (const good of ['INV-2026-000123', 'INV-0000001', '2026/00123', 'RE_12.5']) {
			expect(invoiceNumber.test(good)).toBe(true);
		}
		for (const bad of ['', '../x', '-INV', 'INV 1', 'INV?1', 'x'.repeat(65)]) {
			expect(invoiceNumber.test(bad)).toBe(false);
		}
		const assetId = new RegExp(`^${ASSET_ID_PATTERN}$`);
		expect(assetId.test('AST-000123')).toBe(true);
		expect(assetId.test('AST/1')).toBe(false);
	});
});

describe('pages', () => {
	test('pageQuery names the page arguments', () => {
		expect(pageQuery(3, 50)).toEqual({ page: 3, pageSize: 50 });
	});
});

describe('timestamps', () => {
	test('toServiceTimestamp is UTC without milliseconds', () => {
		expect(toServiceTimestamp(new Date('2026-03-31T14:30:15.789+02:00'))).toBe(
			'2026-03-31T12:30:15Z',
		);
	});
});
