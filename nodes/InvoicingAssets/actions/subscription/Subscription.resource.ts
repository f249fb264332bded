import { resourceDescription } from '../common.descriptions';
import type { Operation } from '../types';
import * as create from './create.operation';
import * as del from './delete.operation';
import * as getAll from './getMany.operation';

export const operations: Record<string, Operation> = { create, delete: del, getAll };

export const description = resourceDescription(
	'subscription',
	operations,
	[
		{
			name: 'Create',
			value: 'create',
			description: 'Register an HTTPS address to receive events',
			action: 'Create a subscription',
		},
		{
			name: 'Delete',
			value: 'delete',
			description: 'Stop the events sent to an address',
			action: 'Delete a subscription',
		},
		{
			name: 'Get Many',
			value: 'getAll',
			description: 'List the webhook subscriptions',
			action: 'Get many subscriptions',
		},
	],
	'getAll',
);
