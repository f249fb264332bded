import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import type { ServiceClient } from '../../transport';
import { readAllPages } from '../../transport/pageReader';
import {
	INVOICE_STATUSES,
	paths,
	type Invoice,
	type InvoiceFilters,
} from '../../transport/contract';
import { summarizeInvoice } from '../simplify';
import {
	FIRST_RECORDS_ADVICE,
	limitProperty,
	returnAllProperty,
	statusOptions,
	updatedRangeFilters,
} from '../common.descriptions';
import {
	isGiven,
	optionalText,
	readDateRange,
	readLimit,
	readUpdatedRange,
	requireChoice,
} from '../validation';
import { billedAssetsOfRun, invoiceOptions } from './billedAssets';

const properties: INodeProperties[] = [
	returnAllProperty,
	limitProperty,
	{
		displayName: 'Filters',
		name: 'filters',
		type: 'collection',
		placeholder: 'Add Filter',
		default: {},
		options: [
			{
				displayName: 'Customer Number',
				name: 'customerNumber',
				type: 'string',
				default: '',
				placeholder: 'e.g. CUST-10001',
				description: 'Only the invoices of this customer',
			},
			{
				displayName: 'Issued After',
				name: 'issuedAfter',
				type: 'dateTime',
				default: '',
				description:
					'Only invoices issued at or after this time (without a zone, in the workflow’s time zone)',
			},
			{
				displayName: 'Issued Before',
				name: 'issuedBefore',
				type: 'dateTime',
				default: '',
				description:
					'Only invoices issued at or before this time (without a zone, in the workflow’s time zone)',
			},
			{
				displayName: 'Status',
				name: 'status',
				type: 'options',
				options: statusOptions(INVOICE_STATUSES),
				default: 'issued',
				description: 'Only invoices in this state',
			},
			...updatedRangeFilters('invoices'),
		],
	},
	invoiceOptions,
];

export const description = updateDisplayOptions(
	{ show: { resource: ['invoice'], operation: ['getAll'] } },
	properties,
);

export async function execute(
	this: IExecuteFunctions,
	client: ServiceClient,
	itemIndex: number,
): Promise<IDataObject[]> {
	const limit = readLimit(this, itemIndex);
	const filters = readFilters(this, itemIndex);
	const simplify = this.getNodeParameter('options.simplify', itemIndex, false) as boolean;
	const invoices = await readAllPages<Invoice>(client, {
		path: paths.invoices,
		qs: { ...filters },
		limit,
		itemIndex,
		advice: FIRST_RECORDS_ADVICE,
	});
	if (this.getNodeParameter('options.includeBilledAssets', itemIndex, false) === true) {
		const billedAssets = billedAssetsOfRun(this, client);
		return await Promise.all(
			invoices.map(async (invoice) => await billedAssets.addTo(this, invoice, simplify, itemIndex)),
		);
	}
	return (simplify ? invoices.map(summarizeInvoice) : invoices) as unknown as IDataObject[];
}

function readFilters(context: IExecuteFunctions, itemIndex: number): InvoiceFilters {
	const given = context.getNodeParameter('filters', itemIndex, {}) as IDataObject;
	const filters: InvoiceFilters = {};
	const issued = readDateRange(
		context,
		itemIndex,
		{ from: given.issuedAfter, to: given.issuedBefore },
		{ from: 'Issued After', to: 'Issued Before' },
		'invoice',
	);
	if (issued.from) filters.issuedFrom = issued.from;
	if (issued.to) filters.issuedTo = issued.to;
	Object.assign(filters, readUpdatedRange(context, itemIndex, given, 'invoice'));
	if (isGiven(given.status)) {
		filters.status = requireChoice(context, itemIndex, given.status, INVOICE_STATUSES, 'Status');
	}
	const customerNumber = optionalText(context, itemIndex, given.customerNumber, 'Customer Number');
	if (customerNumber) filters.customerNumber = customerNumber;
	return filters;
}
