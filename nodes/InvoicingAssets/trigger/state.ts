import type { IDataObject } from 'n8n-workflow';

/**
 * What the trigger keeps in its node static data: the ID of the subscription it created and the
 * SHA-256 (hex) of that subscription's delivery key, never the key; and the subscriptions it had
 * to leave to an API key the credential no longer holds (retiring, see below). Only the lifecycle
 * methods (checkExists, create, delete) write it; webhook() only reads it.
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
/** 'production' when it was made for the production URL (a publish), 'test' for the editor's test URL. */
const REGISTERED_FOR = 'registeredFor';
const RETIRING = 'retiringSubscriptions';

const FIELDS = [
	SUBSCRIPTION_ID,
	DELIVERY_KEY_HASH,
	WORKFLOW_ID,
	CLIENT_ID,
	BASE_URL,
	CREATED_AT,
	KEY_EXPIRES_ON,
	REGISTERED_FOR,
];

/** At most this many retiring subscriptions are kept (the oldest is dropped first). */
export const MAX_RETIRING_SUBSCRIPTIONS = 4;

export interface StoredSubscription {
	subscriptionId: string;
	deliveryKeyHash: string;
	/** Absent in what older versions stored. */
	workflowId?: string;
	clientId?: string;
	baseUrl?: string;
	createdAt?: string;
	keyExpiresOn?: string;
	registeredFor?: 'production' | 'test';
}

/**
 * A subscription of an API key the credential no longer holds (the key was replaced): the trigger
 * cannot delete it, and it ends with that key. Until then its deliveries are let in, for the
 * events that occurred before the trigger's new subscription existed (the service retries those
 * through it alone); the others reach the trigger through the new subscription too.
 */
export interface RetiringSubscription {
	subscriptionId: string;
	deliveryKeyHash: string;
	clientId: string;
	/** When it ends at the latest (its key's expiry), a service timestamp. */
	endsBy: string;
	/** The service's time of the trigger's next subscription, once it exists (from its `createdAt`). */
	replacedAt?: string;
}

function text(staticData: IDataObject, name: string): string | undefined {
	const value = staticData[name];
	return typeof value === 'string' && value !== '' ? value : undefined;
}

export function readStoredSubscription(staticData: IDataObject): StoredSubscription | undefined {
	const subscriptionId = text(staticData, SUBSCRIPTION_ID);
	if (subscriptionId === undefined) return undefined;
	const registeredFor = text(staticData, REGISTERED_FOR);
	return {
		subscriptionId,
		deliveryKeyHash: text(staticData, DELIVERY_KEY_HASH) ?? '',
		workflowId: text(staticData, WORKFLOW_ID),
		clientId: text(staticData, CLIENT_ID),
		baseUrl: text(staticData, BASE_URL),
		createdAt: text(staticData, CREATED_AT),
		keyExpiresOn: text(staticData, KEY_EXPIRES_ON),
		registeredFor:
			registeredFor === 'production' || registeredFor === 'test' ? registeredFor : undefined,
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
		[REGISTERED_FOR, subscription.registeredFor],
	];
	for (const [name, value] of optional) if (value !== undefined) staticData[name] = value;
}

/**
 * Removes the stored subscription; untouched (and so not saved again) when there is none. The
 * retiring subscriptions stay.
 */
export function forgetSubscription(staticData: IDataObject) {
	for (const name of FIELDS) {
		if (name in staticData) delete staticData[name];
	}
}

/** The retiring subscriptions that have not ended by `now` (ms). */
export function readRetiringSubscriptions(
	staticData: IDataObject,
	now = Date.now(),
): RetiringSubscription[] {
	const stored = staticData[RETIRING];
	if (!Array.isArray(stored)) return [];
	return stored.flatMap((entry: unknown) => {
		const fields = (typeof entry === 'object' && entry !== null ? entry : {}) as IDataObject;
		const retiring = {
			subscriptionId: text(fields, 'subscriptionId'),
			deliveryKeyHash: text(fields, 'deliveryKeyHash'),
			clientId: text(fields, 'clientId'),
			endsBy: text(fields, 'endsBy'),
			replacedAt: text(fields, 'replacedAt'),
		};
		const { subscriptionId, deliveryKeyHash, clientId, endsBy } = retiring;
		if (!subscriptionId || !deliveryKeyHash || !clientId || !endsBy) return [];
		if (!(Date.parse(endsBy) > now)) return [];
		return [{ ...retiring, subscriptionId, deliveryKeyHash, clientId, endsBy }];
	});
}

function writeRetiring(staticData: IDataObject, retiring: RetiringSubscription[]) {
	if (retiring.length === 0) {
		if (RETIRING in staticData) delete staticData[RETIRING];
		return;
	}
	staticData[RETIRING] = retiring
		.slice(-MAX_RETIRING_SUBSCRIPTIONS)
		.map((entry) =>
			Object.fromEntries(Object.entries(entry).filter(([, value]) => value !== undefined)),
		);
}

/** Keeps `subscription` as retiring (the ended ones are dropped meanwhile). */
export function retireSubscription(staticData: IDataObject, subscription: RetiringSubscription) {
	const others = readRetiringSubscriptions(staticData).filter(
		(entry) => entry.subscriptionId !== subscription.subscriptionId,
	);
	writeRetiring(staticData, [...others, subscription]);
}

/** Whether a retiring subscription still waits for the service's time of its replacement. */
export function awaitsReplacement(staticData: IDataObject): boolean {
	return readRetiringSubscriptions(staticData).some((entry) => entry.replacedAt === undefined);
}

/** Notes `replacedAt` on the retiring subscriptions that have no replacement yet. */
export function noteReplacement(staticData: IDataObject, replacedAt: string) {
	writeRetiring(
		staticData,
		readRetiringSubscriptions(staticData).map((entry) => ({
			...entry,
			replacedAt: entry.replacedAt ?? replacedAt,
		})),
	);
}
