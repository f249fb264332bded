import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import {
	INVOICE_STATUSES,
	paths,
	type Invoice,
	type InvoiceFilters,
} from '../../transport/contract';
import { customerNumberFilter, dateRangeFilters, statusOptions } from '../common.descriptions';
import { getManyOperation } from '../records';
import { isGiven, optionalText, readDateRange, requireChoice } from '../validation';
import { invoiceOptions, invoiceOutput } from './billedAssets';

export const { description, execute } = getManyOperation<Invoice>({
	resource: 'invoice',
	filters: [
		customerNumberFilter('the invoices'),
		...dateRangeFilters('Issued', 'invoices issued'),
		{
			displayName: 'Status',
			name: 'status',
			type: 'options',
			options: statusOptions(INVOICE_STATUSES),
			default: 'issued',
			description: 'Only invoices in this state',
		},
		...dateRangeFilters('Updated', 'invoices last changed'),
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
	const filters: InvoiceFilters = {
		...readDateRange(context, itemIndex, given, 'Issued', 'invoice'),
		...readDateRange(context, itemIndex, given, 'Updated', 'invoice'),
	};
	if (isGiven(given.status)) {
		filters.status = requireChoice(context, itemIndex, given.status, INVOICE_STATUSES, 'Status');
	}
	const customerNumber = optionalText(context, itemIndex, given.customerNumber, 'Customer Number');
	if (customerNumber) filters.customerNumber = customerNumber;
	return filters;
}
