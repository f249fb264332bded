import type { IDataObject } from 'n8n-workflow';

/**
 * What the trigger keeps in its node static data: the ID of the subscription it created and the
 * SHA-256 (hex) of that subscription's delivery key, never the key. Only the lifecycle methods
 * (checkExists, create, delete) write it; webhook() only reads it.
 */
const SUBSCRIPTION_ID = 'subscriptionId';
const DELIVERY_KEY_HASH = 'deliveryKeyHash';
/** Whose subscription it is: the workflow, and the API key (client ID, never the secret) and Base URL. */
const WORKFLOW_ID = 'workflowId';
const CLIENT_ID = 'clientId';
const BASE_URL = 'baseUrl';
/** When it was created, and when its API key expires (if the credential said): it ends with the key. */
const CREATED_AT = 'createdAt';
const KEY_EXPIRES_ON = 'keyExpiresOn';

const FIELDS = [
	SUBSCRIPTION_ID,
	DELIVERY_KEY_HASH,
	WORKFLOW_ID,
	CLIENT_ID,
	BASE_URL,
	CREATED_AT,
	KEY_EXPIRES_ON,
];

export interface StoredSubscription {
	subscriptionId: string;
	deliveryKeyHash: string;
	/** Absent in what older versions stored. */
	workflowId?: string;
	clientId?: string;
	baseUrl?: string;
	createdAt?: string;
	keyExpiresOn?: string;
}

export function readStoredSubscription(staticData: IDataObject): StoredSubscription | undefined {
	const subscriptionId = staticData[SUBSCRIPTION_ID];
	if (typeof subscriptionId !== 'string' || subscriptionId === '') return undefined;
	const hash = staticData[DELIVERY_KEY_HASH];
	const text = (name: string) =>
		typeof staticData[name] === 'string' && staticData[name] !== ''
			? (staticData[name] as string)
			: undefined;
	return {
		subscriptionId,
		deliveryKeyHash: typeof hash === 'string' ? hash : '',
		workflowId: text(WORKFLOW_ID),
		clientId: text(CLIENT_ID),
		baseUrl: text(BASE_URL),
		createdAt: text(CREATED_AT),
		keyExpiresOn: text(KEY_EXPIRES_ON),
	};
}

export function storeSubscription(staticData: IDataObject, subscription: StoredSubscription) {
	forgetSubscription(staticData);
	staticData[SUBSCRIPTION_ID] = subscription.subscriptionId;
	staticData[DELIVERY_KEY_HASH] = subscription.deliveryKeyHash;
	const optional: Array<[string, string | undefined]> = [
		[WORKFLOW_ID, subscription.workflowId],
		[CLIENT_ID, subscription.clientId],
		[BASE_URL, subscription.baseUrl],
		[CREATED_AT, subscription.createdAt],
		[KEY_EXPIRES_ON, subscription.keyExpiresOn],
	];
	for (const [name, value] of optional) if (value !== undefined) staticData[name] = value;
}

/** Removes everything the trigger stored; untouched (and so not saved again) when there is nothing. */
export function forgetSubscription(staticData: IDataObject) {
	for (const name of FIELDS) {
		if (name in staticData) delete staticData[name];
	}
}
