import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import type { ServiceClient } from '../../transport';
import {
	INVOICE_NUMBER_PATTERN,
	paths,
	summarizeInvoice,
	type Invoice,
} from '../../transport/contract';
import { concurrencyOption, simplifyOption } from '../common.descriptions';
import { requireIdentifier } from '../validation';

const EXAMPLE = 'INV-2026-000123';

const properties: INodeProperties[] = [
	{
		displayName: 'Invoice Number',
		name: 'invoiceNumber',
		type: 'resourceLocator',
		default: { mode: 'list', value: '' },
		required: true,
		description: 'The invoice to get',
		modes: [
			{
				displayName: 'From List',
				name: 'list',
				type: 'list',
				placeholder: 'Select an invoice...',
				typeOptions: { searchListMethod: 'searchInvoices', searchable: true },
			},
			{
				displayName: 'By Number',
				name: 'number',
				type: 'string',
				placeholder: `e.g. ${EXAMPLE}`,
				validation: [
					{
						type: 'regex',
						properties: {
							regex: `^\\s*${INVOICE_NUMBER_PATTERN}\\s*$`,
							errorMessage: `Enter an invoice number such as ${EXAMPLE}`,
						},
					},
				],
			},
		],
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [concurrencyOption, simplifyOption],
	},
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
	const invoice = await client.request<Invoice>({
		method: 'GET',
		path: paths.invoice(invoiceNumber),
		subject: `Invoice '${invoiceNumber}'`,
		itemIndex,
	});
	return [(simplify ? summarizeInvoice(invoice) : invoice) as unknown as IDataObject];
}
