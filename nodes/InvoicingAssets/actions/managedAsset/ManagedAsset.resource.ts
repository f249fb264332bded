import { resourceDescription } from '../common.descriptions';
import type { Operation } from '../types';
import * as get from './get.operation';
import * as getAll from './getMany.operation';

export const operations: Record<string, Operation> = { get, getAll };

export const description = resourceDescription('managedAsset', operations, [
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
]);
