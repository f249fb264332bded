import {
	ASSET_ID_PATTERN,
	ASSET_SUMMARY_FIELDS,
	INVOICE_NUMBER_PATTERN,
	REDACTED,
	billedAssetIds,
	fitsOnePathSegment,
	pageQuery,
	paths,
	readAccessToken,
	readCreatedSubscriptionId,
	readPage,
	readRetryAfterMs,
	readServiceError,
	redactDeliveryKey,
	redactDeliveryKeysInText,
	summarizeAsset,
	summarizeInvoice,
	toServiceTimestamp,
	withDeliveryKey,
	type Asset,
	type Invoice,
} from '../../../nodes/InvoicingAssets/transport/contract';
import { expectNoSecret } from '../../harness/secrets';

const invoice: Invoice = {
	invoiceNumber: 'INV-0000042',
	customerNumber: 'CUST-10001',
	issueDate: '2025-03-01T10:00:00Z',
	dueDate: '2025-03-31T10:00:00Z',
	status: 'issued',
	currency: 'EUR',
	totalAmount: 119,
	taxAmount: 19,
	updatedAt: '2025-03-01T10:00:00Z',
	lines: [
		{ description: 'Router', quantity: 1, unitPrice: 50, amount: 50, assetId: 'AST-000002' },
		{ description: 'Fee', quantity: 1, unitPrice: 10, amount: 10, assetId: null },
		{ description: 'Switch', quantity: 1, unitPrice: 20, amount: 20, assetId: 'AST-000001' },
		{ description: 'Router again', quantity: 1, unitPrice: 20, amount: 20, assetId: 'AST-000002' },
	],
};

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
	test('readPage accepts the envelope as object or JSON text, and nothing else', () => {
		const envelope = { items: [{ a: 1 }], page: 1, pageSize: 1, totalItems: 5 };
		expect(readPage(envelope)).toEqual(envelope);
		expect(readPage(JSON.stringify(envelope))).toEqual(envelope);
		expect(readPage([{ a: 1 }])).toBeUndefined();
		expect(readPage({ data: [] })).toBeUndefined();
		expect(readPage('not json')).toBeUndefined();
		expect(readPage(null)).toBeUndefined();
	});

	test('pageQuery names the page arguments', () => {
		expect(pageQuery(3, 50)).toEqual({ page: 3, pageSize: 50 });
	});
});

describe('tokens and subscriptions', () => {
	test('readAccessToken reads accessToken, tolerates access_token, refuses empties', () => {
		expect(readAccessToken({ accessToken: 'a' })).toBe('a');
		expect(readAccessToken('{"access_token":"b"}')).toBe('b');
		expect(readAccessToken({ accessToken: '' })).toBeUndefined();
		expect(readAccessToken({ token: 'c' })).toBeUndefined();
		expect(readAccessToken('plain text')).toBeUndefined();
	});

	test('readCreatedSubscriptionId reads a JSON string, bare text or { id }', () => {
		const id = '3f2c9a7e-1b4d-4c8e-9f0a-2d6b8e1c5a47';
		expect(readCreatedSubscriptionId(`"${id}"`)).toBe(id);
		expect(readCreatedSubscriptionId(` ${id}\n`)).toBe(id);
		expect(readCreatedSubscriptionId({ id })).toBe(id);
		expect(readCreatedSubscriptionId(`{"id":"${id}"}`)).toBe(id);
		expect(readCreatedSubscriptionId('')).toBeUndefined();
		expect(readCreatedSubscriptionId({})).toBeUndefined();
		expect(readCreatedSubscriptionId(null)).toBeUndefined();
	});

	test('the delivery key is added as apiKey and hidden again for output', () => {
		const url = withDeliveryKey('https://n8n.example.com/webhook/x?a=1', 'k&y=');
		expect(new URL(url).searchParams.get('apiKey') === 'k&y=').toBe(true);
		expect(new URL(url).searchParams.get('a')).toBe('1');
		const redacted = redactDeliveryKey(url);
		expectNoSecret(redacted, ['k%26y', 'k&y'], 'the redacted URL');
		expect(new URL(redacted).searchParams.get('apiKey')).toBe(REDACTED);
		expect(redactDeliveryKey('https://n8n.example.com/webhook/x')).toBe(
			'https://n8n.example.com/webhook/x',
		);
		expect(redactDeliveryKey('not a url?apiKey=secret&b=2')).toBe(
			`not a url?apiKey=${REDACTED}&b=2`,
		);
	});

	test('in free text every delivery key is hidden, whole, and the words around it are kept', () => {
		expect(
			redactDeliveryKeysInText(
				'https://a.example/h?apiKey=s3cr3ts_s-9 did not answer; "https://b.example/h?x=1&APIKEY=ssss" neither',
			),
		).toBe(
			`https://a.example/h?apiKey=${REDACTED} did not answer; "https://b.example/h?x=1&APIKEY=${REDACTED}" neither`,
		);
	});
});

describe('errors and limits', () => {
	test('readServiceError reads the service’s, OAuth and problem+json shapes', () => {
		expect(readServiceError({ code: 'not_found', message: 'Gone', details: null })).toEqual({
			code: 'not_found',
			message: 'Gone',
		});
		expect(readServiceError('{"error":"invalid_client","error_description":"No"}')).toEqual({
			code: 'invalid_client',
			message: 'No',
		});
		expect(readServiceError({ title: 'Bad Request', detail: 'page' })).toEqual({
			code: 'Bad Request',
			message: 'page',
		});
		expect(readServiceError('<html>')).toEqual({ code: null, message: null });
	});

	test('readRetryAfterMs reads seconds and HTTP dates', () => {
		const now = Date.parse('2026-01-01T00:00:00Z');
		expect(readRetryAfterMs('2', now)).toBe(2000);
		expect(readRetryAfterMs(1.5, now)).toBe(1500);
		expect(readRetryAfterMs(['7'], now)).toBe(7000);
		expect(readRetryAfterMs('Thu, 01 Jan 2026 00:00:09 GMT', now)).toBe(9000);
		expect(readRetryAfterMs('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0);
		expect(readRetryAfterMs('soon', now)).toBeUndefined();
		expect(readRetryAfterMs('', now)).toBeUndefined();
		expect(readRetryAfterMs(undefined, now)).toBeUndefined();
	});

	test('toServiceTimestamp is UTC without milliseconds', () => {
		expect(toServiceTimestamp(new Date('2026-03-31T14:30:15.789+02:00'))).toBe(
			'2026-03-31T12:30:15Z',
		);
	});
});

describe('simplified records', () => {
	test('an invoice keeps its main fields and the assets it bills, once each', () => {
		expect(summarizeInvoice(invoice)).toEqual({
			invoiceNumber: 'INV-0000042',
			customerNumber: 'CUST-10001',
			issueDate: '2025-03-01T10:00:00Z',
			dueDate: '2025-03-31T10:00:00Z',
			status: 'issued',
			currency: 'EUR',
			totalAmount: 119,
			assetIds: ['AST-000002', 'AST-000001'],
		});
	});

	test('an invoice without lines bills no assets, and a missing field is null', () => {
		const partial = { ...invoice, lines: undefined, dueDate: undefined } as unknown as Invoice;
		expect(billedAssetIds(partial)).toEqual([]);
		expect(summarizeInvoice(partial).dueDate).toBeNull();
	});

	test('an asset keeps its main fields', () => {
		const asset: Asset = {
			assetId: 'AST-000001',
			serialNumber: 'SN1',
			type: 'router',
			model: null,
			site: 'Berlin HQ',
			customerNumber: 'CUST-10001',
			status: 'active',
			contractEnd: '2027-01-01T00:00:00Z',
			updatedAt: '2025-01-01T00:00:00Z',
		};
		const summary = summarizeAsset(asset);
		expect(Object.keys(summary)).toEqual([...ASSET_SUMMARY_FIELDS]);
		expect(summary).toEqual({
			assetId: 'AST-000001',
			serialNumber: 'SN1',
			type: 'router',
			model: null,
			site: 'Berlin HQ',
			customerNumber: 'CUST-10001',
			status: 'active',
			contractEnd: '2027-01-01T00:00:00Z',
		});
	});
});
