/**
 * What the action node's "Simplify" option keeps of a record: the node's choice, not the
 * service's, so it lives beside the operations that offer it.
 */
import type { Asset, Invoice } from '../transport/contract';
import { billedAssetIds } from '../transport/responses';

/** The invoice fields Simplify keeps, plus `assetIds`. */
export const INVOICE_SUMMARY_FIELDS = [
	'invoiceNumber',
	'customerNumber',
	'issueDate',
	'dueDate',
	'status',
	'currency',
	'totalAmount',
] as const satisfies ReadonlyArray<keyof Invoice>;

export type InvoiceSummary = Pick<Invoice, (typeof INVOICE_SUMMARY_FIELDS)[number]> & {
	assetIds: string[];
};

export function summarizeInvoice(invoice: Invoice): InvoiceSummary {
	return {
		...pickFields(invoice, INVOICE_SUMMARY_FIELDS),
		assetIds: billedAssetIds(invoice),
	};
}

/** The asset fields Simplify keeps. */
export const ASSET_SUMMARY_FIELDS = [
	'assetId',
	'serialNumber',
	'type',
	'model',
	'site',
	'customerNumber',
	'status',
	'contractEnd',
] as const satisfies ReadonlyArray<keyof Asset>;

export type AssetSummary = Pick<Asset, (typeof ASSET_SUMMARY_FIELDS)[number]>;

export function summarizeAsset(asset: Asset): AssetSummary {
	return pickFields(asset, ASSET_SUMMARY_FIELDS);
}

/** The named fields of a record; a field the service left out is null, as the spec says it would be. */
function pickFields<T extends object, K extends keyof T>(
	record: T,
	fields: readonly K[],
): Pick<T, K> {
	const picked = {} as Pick<T, K>;
	for (const field of fields) picked[field] = (record[field] ?? null) as T[K];
	return picked;
}
