import type { ILoadOptionsFunctions, INodeListSearchResult } from 'n8n-workflow';

import { ServiceClient } from '../transport';
import { paths, readSubscriptions, redactDeliveryKey } from '../transport/contract';

export async function searchSubscriptions(
	this: ILoadOptionsFunctions,
	filter?: string,
): Promise<INodeListSearchResult> {
	const client = new ServiceClient(this);
	const subscriptions = readSubscriptions(
		await client.request({ method: 'GET', path: paths.subscriptions }),
	);
	const needle = filter?.trim().toLowerCase() ?? '';
	return {
		results: subscriptions
			.map((subscription) => ({
				name: `${subscription.description ?? 'Subscription'} → ${redactDeliveryKey(subscription.notificationUrl)}`,
				value: subscription.id,
			}))
			.filter(
				(entry) =>
					needle === '' ||
					entry.name.toLowerCase().includes(needle) ||
					entry.value.toLowerCase().includes(needle),
			),
	};
}
