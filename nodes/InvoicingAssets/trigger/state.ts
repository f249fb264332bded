import type {
	ICredentialDataDecryptedObject,
	IDataObject,
	IHookFunctions,
	IWebhookFunctions,
} from 'n8n-workflow';

import { baseUrlOf, clientIdOf } from '../transport/tokenBinding';

/**
 * What the trigger keeps in its node static data: its subscription's ID and the SHA-256 (hex) of
 * its delivery key, never the key, and the retiring subscriptions of a replaced key. Only
 * checkExists, create and delete write it; webhook() reads it. Also whose a subscription is.
 */

/** Each field of the stored subscription is the static data entry of its name. */
const FIELDS = ['subscriptionId', 'deliveryKeyHash', 'workflowId', 'clientId', 'baseUrl'] as const;
const RETIRING = 'retiringSubscriptions';

export interface StoredSubscription {
	subscriptionId: string;
	deliveryKeyHash: string;
	/** Whose it is: the workflow, and the API key (client ID, never the secret) and Base URL. */
	workflowId?: string;
	clientId?: string;
	baseUrl?: string;
}

/**
 * A subscription of an API key or Base URL the credential no longer holds, which the current key
 * could not delete: it ends with its own key, and its deliveries are let in until `endsBy`.
 */
export interface RetiringSubscription {
	subscriptionId: string;
	deliveryKeyHash: string;
	/** When its deliveries are refused like any unknown key's (n8n's clock, a service timestamp). */
	endsBy: string;
	/** The service's time of the trigger's next subscription's creation, once made and said. */
	replacedAt?: string;
}

function text(staticData: IDataObject, name: string): string | undefined {
	const value = staticData[name];
	return typeof value === 'string' && value !== '' ? value : undefined;
}

export function readStoredSubscription(staticData: IDataObject): StoredSubscription | undefined {
	const subscriptionId = text(staticData, 'subscriptionId');
	if (subscriptionId === undefined) return undefined;
	return {
		subscriptionId,
		deliveryKeyHash: text(staticData, 'deliveryKeyHash') ?? '',
		workflowId: text(staticData, 'workflowId'),
		clientId: text(staticData, 'clientId'),
		baseUrl: text(staticData, 'baseUrl'),
	};
}

export function storeSubscription(staticData: IDataObject, subscription: StoredSubscription) {
	forgetSubscription(staticData);
	for (const name of FIELDS) {
		if (subscription[name] !== undefined) staticData[name] = subscription[name];
	}
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
		const subscriptionId = text(fields, 'subscriptionId');
		const deliveryKeyHash = text(fields, 'deliveryKeyHash');
		const endsBy = text(fields, 'endsBy');
		if (!subscriptionId || !deliveryKeyHash || !endsBy || !(Date.parse(endsBy) > now)) return [];
		const replacedAt = text(fields, 'replacedAt');
		return [{ subscriptionId, deliveryKeyHash, endsBy, ...(replacedAt ? { replacedAt } : {}) }];
	});
}

function writeRetiring(staticData: IDataObject, retiring: RetiringSubscription[]) {
	if (retiring.length > 0) staticData[RETIRING] = retiring as unknown as IDataObject[];
	else if (RETIRING in staticData) delete staticData[RETIRING];
}

/** Keeps `subscription` as retiring (the ended ones are dropped meanwhile). */
export function retireSubscription(staticData: IDataObject, subscription: RetiringSubscription) {
	const others = readRetiringSubscriptions(staticData).filter(
		(entry) => entry.subscriptionId !== subscription.subscriptionId,
	);
	writeRetiring(staticData, [...others, subscription]);
}

/**
 * Notes, on the retiring subscriptions that lack it, when their replacement was made (`replacedAt`,
 * the service's time), and that their deliveries are let in until `endsBy` from then on.
 */
export function noteReplacement(staticData: IDataObject, replacedAt: string, endsBy: string) {
	const retiring = readRetiringSubscriptions(staticData);
	if (retiring.every((entry) => entry.replacedAt !== undefined)) return;
	writeRetiring(
		staticData,
		retiring.map((entry) => (entry.replacedAt ? entry : { ...entry, replacedAt, endsBy })),
	);
}

/**
 * Whose the stored subscription is:
 * - this trigger's, made with the API key and Base URL the credential holds now (or not saying
 *   with which);
 * - another workflow's: its static data was copied, e.g. by an import;
 * - another key's: made with an API key or Base URL the credential no longer holds (the key was
 *   replaced, the environment switched). `madeWith` says which, for n8n's log.
 */
export type Ownership =
	| { owner: 'this trigger' }
	| { owner: 'another workflow' }
	| { owner: 'another key'; madeWith: string };

export function ownershipOf(
	stored: StoredSubscription,
	workflowId: string | undefined,
	credentials: ICredentialDataDecryptedObject,
): Ownership {
	if (stored.workflowId !== undefined && stored.workflowId !== workflowId) {
		return { owner: 'another workflow' };
	}
	if (stored.clientId === undefined) return { owner: 'this trigger' };
	const clientId = clientIdOf(credentials);
	const baseUrl = baseUrlOf(credentials);
	if (stored.clientId === clientId && (stored.baseUrl ?? baseUrl) === baseUrl) {
		return { owner: 'this trigger' };
	}
	return {
		owner: 'another key',
		madeWith:
			stored.clientId === clientId
				? `the Base URL ${stored.baseUrl ?? ''}, which the credential no longer uses`
				: `the API key with client ID '${stored.clientId}', which the credential no longer holds`,
	};
}

/** A line of this trigger in n8n's log, naming the workflow and the node. */
export function logLine(
	context: IHookFunctions | IWebhookFunctions,
	level: 'info' | 'warn',
	text: string,
): void {
	context.logger[level](`Invoicing & Assets Trigger: ${text}`, {
		workflowId: context.getWorkflow().id,
		node: context.getNode().name,
	});
}
