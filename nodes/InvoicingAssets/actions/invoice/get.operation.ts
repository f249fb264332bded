import { INVOICE_NUMBER_PATTERN, paths, type Invoice } from '../../transport/contract';
import { getOperation } from '../records';
import { invoiceOptions, invoiceOutput } from './billedAssets';

const EXAMPLE = 'INV-2026-000123';

export const { description, execute } = getOperation<Invoice>({
	resource: 'invoice',
	locator: {
		displayName: 'Invoice Number',
		name: 'invoiceNumber',
		description: 'The invoice to get',
		searchListMethod: 'searchInvoices',
		listPlaceholder: 'Select an invoice...',
		typedMode: { displayName: 'By Number', name: 'number' },
		example: EXAMPLE,
		pattern: INVOICE_NUMBER_PATTERN,
		errorMessage: `Enter an invoice number such as ${EXAMPLE}`,
	},
	options: invoiceOptions,
	path: paths.invoice,
	subject: (id) => `Invoice '${id}'`,
	output: invoiceOutput,
});
