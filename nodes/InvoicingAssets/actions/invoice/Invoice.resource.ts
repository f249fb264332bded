import { resourceDescription } from '../common.descriptions';
import type { Operation } from '../types';
import * as get from './get.operation';
import * as getAll from './getMany.operation';

export const operations: Record<string, Operation> = { get, getAll };

export const description = resourceDescription('invoice', operations, [
	{
		name: 'Get',
		value: 'get',
		description: 'Retrieve an invoice by its number',
		action: 'Get an invoice',
	},
	{
		name: 'Get Many',
		value: 'getAll',
		description: 'List invoices, optionally filtered by issue date, status or customer',
		action: 'Get many invoices',
	},
]);
