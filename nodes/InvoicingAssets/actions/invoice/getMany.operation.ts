import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import {
	INVOICE_STATUSES,
	paths,
	type Invoice,
	type InvoiceFilters,
} from '../../transport/contract';
import { customerNumberFilter, statusOptions, updatedRangeFilters } from '../common.descriptions';
import { getManyOperation } from '../records';
import {
	isGiven,
	optionalText,
	readDateRange,
	readUpdatedRange,
	requireChoice,
} from '../validation';
import { invoiceOptions, invoiceOutput } from './billedAssets';

export const { description, execute } = getManyOperation<Invoice>({
	resource: 'invoice',
	filters: [
		customerNumberFilter('the invoices'),
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
	readFilters,
	options: invoiceOptions,
	listPath: paths.invoices,
	output: invoiceOutput,
});

function readFilters(
	context: IExecuteFunctions,
	itemIndex: number,
	given: IDataObject,
): InvoiceFilters {
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
