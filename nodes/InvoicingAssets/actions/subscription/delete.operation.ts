import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import type { ServiceClient } from '../../transport';
import { paths, SUBSCRIPTION_ID_PATTERN } from '../../transport/contract';
import { recordLocator } from '../common.descriptions';
import { requireIdentifier } from '../validation';

const EXAMPLE = '3f2c9a7e-1b4d-4c8e-9f0a-2d6b8e1c5a47';

const properties: INodeProperties[] = [
	recordLocator({
		displayName: 'Subscription',
		name: 'subscriptionId',
		description: 'The webhook subscription to delete',
		searchListMethod: 'searchSubscriptions',
		listPlaceholder: 'Select a subscription...',
		typedMode: { displayName: 'By ID', name: 'id' },
		example: EXAMPLE,
		pattern: SUBSCRIPTION_ID_PATTERN,
		errorMessage: `Enter a subscription ID, a GUID such as ${EXAMPLE}`,
	}),
];

export const description = updateDisplayOptions(
	{ show: { resource: ['subscription'], operation: ['delete'] } },
	properties,
);

export async function execute(
	this: IExecuteFunctions,
	client: ServiceClient,
	itemIndex: number,
): Promise<IDataObject[]> {
	const id = requireIdentifier(
		this,
		itemIndex,
		this.getNodeParameter('subscriptionId', itemIndex, '', { extractValue: true }),
		'Subscription',
		EXAMPLE,
	);
	await client.request({
		method: 'DELETE',
		path: paths.subscription(id),
		subject: `Subscription '${id}'`,
		itemIndex,
	});
	return [{ deleted: true }];
}
