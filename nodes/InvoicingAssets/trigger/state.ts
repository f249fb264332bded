import type { IDataObject } from 'n8n-workflow';

/**
 * What the trigger keeps in its node static data: the ID of the subscription it created and the
 * SHA-256 (hex) of that subscription's delivery key, never the key. Only the lifecycle methods
 * (checkExists, create, delete) write it; webhook() only reads it.
 */
const SUBSCRIPTION_ID = 'subscriptionId';
const DELIVERY_KEY_HASH = 'deliveryKeyHash';

export interface StoredSubscription {
	subscriptionId: string;
	deliveryKeyHash: string;
}

export function readStoredSubscription(staticData: IDataObject): StoredSubscription | undefined {
	const subscriptionId = staticData[SUBSCRIPTION_ID];
	if (typeof subscriptionId !== 'string' || subscriptionId === '') return undefined;
	const hash = staticData[DELIVERY_KEY_HASH];
	return { subscriptionId, deliveryKeyHash: typeof hash === 'string' ? hash : '' };
}

export function storeSubscription(staticData: IDataObject, subscription: StoredSubscription) {
	forgetSubscription(staticData);
	staticData[SUBSCRIPTION_ID] = subscription.subscriptionId;
	staticData[DELIVERY_KEY_HASH] = subscription.deliveryKeyHash;
}

/** Removes everything the trigger stored; untouched (and so not saved again) when there is nothing. */
export function forgetSubscription(staticData: IDataObject) {
	for (const name of [SUBSCRIPTION_ID, DELIVERY_KEY_HASH]) {
		if (name in staticData) delete staticData[name];
	}
}
