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
		displayOptions: { show: { resource: ['managedAsset'] } },
		options: [
			{
				name: 'Get',
				value: 'get',
				description: 'Retrieve a managed asset by its ID',
				action: 'Get a managed asset',
			},
			{
				name: 'Get Many',
				value: 'getAll',
				description: 'List managed assets, optionally filtered by status, type, site or customer',
				action: 'Get many managed assets',
			},
		],
		default: 'get',
	},
	...get.description,
	...getAll.description,
];
