import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import type { ServiceClient } from '../../transport';
import { redactDeliveryKey } from '../../transport/notificationUrl';
import { limitProperty, returnAllProperty } from '../common.descriptions';
import { readLimit } from '../validation';

const properties: INodeProperties[] = [returnAllProperty, limitProperty];

export const description = updateDisplayOptions(
	{ show: { resource: ['subscription'], operation: ['getAll'] } },
	properties,
);

export async function execute(
	this: IExecuteFunctions,
	client: ServiceClient,
	itemIndex: number,
): Promise<IDataObject[]> {
	const limit = readLimit(this, itemIndex);
	const subscriptions = await client.listSubscriptions({ itemIndex, limit });
	return subscriptions.map((subscription) => ({
		...subscription,
		notificationUrl: redactDeliveryKey(subscription.notificationUrl),
	}));
}
