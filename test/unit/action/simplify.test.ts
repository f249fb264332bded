import { type Asset, type Invoice } from '../../../nodes/InvoicingAssets/transport/contract';
import { billedAssetIds } from '../../../nodes/InvoicingAssets/transport/responses';
import {
	ASSET_SUMMARY_FIELDS,
	summarizeAsset,
	summarizeInvoice,
} from '../../../nodes/InvoicingAssets/actions/simplify';
import { invoice } from '../fixtures';

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
