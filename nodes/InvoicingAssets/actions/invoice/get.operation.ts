import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import type { ServiceClient } from '../../transport';
import { INVOICE_NUMBER_PATTERN, paths, type Invoice } from '../../transport/contract';
import { summarizeInvoice } from '../simplify';
import { recordLocator } from '../common.descriptions';
import { requireIdentifier } from '../validation';
import { billedAssetsOfRun, invoiceOptions } from './billedAssets';

const EXAMPLE = 'INV-2026-000123';

const properties: INodeProperties[] = [
	recordLocator({
		displayName: 'Invoice Number',
		name: 'invoiceNumber',
		description: 'The invoice to get',
		searchListMethod: 'searchInvoices',
		listPlaceholder: 'Select an invoice...',
		typedMode: { displayName: 'By Number', name: 'number' },
		example: EXAMPLE,
		pattern: INVOICE_NUMBER_PATTERN,
		errorMessage: `Enter an invoice number such as ${EXAMPLE}`,
	}),
	invoiceOptions,
];

export const description = updateDisplayOptions(
	{ show: { resource: ['invoice'], operation: ['get'] } },
	properties,
);

export async function execute(
	this: IExecuteFunctions,
	client: ServiceClient,
	itemIndex: number,
): Promise<IDataObject[]> {
	const invoiceNumber = requireIdentifier(
		this,
		itemIndex,
		this.getNodeParameter('invoiceNumber', itemIndex, '', { extractValue: true }),
		'Invoice Number',
		EXAMPLE,
	);
	const simplify = this.getNodeParameter('options.simplify', itemIndex, false) as boolean;
	const invoice = await client.getRecord<Invoice>({
		path: paths.invoice(invoiceNumber),
		subject: `Invoice '${invoiceNumber}'`,
		itemIndex,
	});
	if (this.getNodeParameter('options.includeBilledAssets', itemIndex, false) === true) {
		return [await billedAssetsOfRun(this, client).addTo(this, invoice, simplify, itemIndex)];
	}
	return [(simplify ? summarizeInvoice(invoice) : invoice) as unknown as IDataObject];
}
