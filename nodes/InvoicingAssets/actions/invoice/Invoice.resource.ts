import type { INodeProperties } from 'n8n-workflow';

import type { Operation } from '../types';
import * as get from './get.operation';
import * as getAll from './getMany.operation';

export const operations: Record<string, Operation> = { get, getAll };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['invoice'] } },
		options: [
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
		],
		default: 'get',
	},
	...get.description,
	...getAll.description,
];
