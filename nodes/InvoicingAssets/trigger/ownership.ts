import type { ICredentialDataDecryptedObject, IDataObject, IHookFunctions } from 'n8n-workflow';

import {
	DELIVERY_RETRIES_END_WITHIN_MS,
	subscriptionEndsBy,
	toServiceTimestamp,
} from '../transport/contract';
import type { ServiceClient } from '../transport';
import { baseUrlOf } from '../transport/tokenRenewal';
import { messageOf, removeSubscription } from './serviceCalls';
import {
	forgetSubscription,
	readStoredSubscription,
	retireSubscription,
	type StoredSubscription,
} from './state';

/** What n8n's log says about this trigger, so that a line names the workflow and the node. */
export function logContext(context: Pick<IHookFunctions, 'getWorkflow' | 'getNode'>) {
	return { workflowId: context.getWorkflow().id, node: context.getNode().name };
}

/**
 * Whose the stored subscription is:
 * - this trigger's, made with the API key and Base URL the credential holds now (or stored by a
 *   version of the package that did not say whose it was);
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
	const clientId = String(credentials.clientId ?? '').trim();
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

/**
 * Ends the stored subscription and forgets it, so that publishing and unpublishing never fail
 * because of whose it is. This trigger's is deleted (a failure is thrown, and it stays stored);
 * another workflow's is left untouched; another key's is deleted if the current key can, else
 * left to end with its own key (leaveToItsKey).
 */
export async function endStoredSubscription(
	context: IHookFunctions,
	client: ServiceClient,
	staticData: IDataObject,
): Promise<void> {
	const stored = readStoredSubscription(staticData);
	if (!stored) return;
	const ownership = ownershipOf(stored, context.getWorkflow().id, await client.credentials());
	if (ownership.owner === 'this trigger') {
		await removeSubscription(context, client, stored.subscriptionId);
	} else if (ownership.owner === 'another key') {
		await leaveToItsKey(context, client, staticData, stored, ownership.madeWith);
	}
	forgetSubscription(staticData);
}

/**
 * A subscription another API key (or Base URL) made. The contract has it belong to that key, so
 * that the current key's delete is answered "not found"; should the service let the current key
 * delete it after all, it is deleted. Otherwise it ends with its own key, and is kept as retiring
 * (state.ts): its deliveries are let in for DELIVERY_RETRIES_END_WITHIN_MS after its replacement,
 * for the service's retries of what fell between unpublish and publish. When its key has certainly
 * expired, it is simply forgotten. Nothing here is thrown: n8n's log says what happened.
 */
async function leaveToItsKey(
	context: IHookFunctions,
	client: ServiceClient,
	staticData: IDataObject,
	stored: StoredSubscription,
	madeWith: string,
): Promise<void> {
	const id = stored.subscriptionId;
	const keyEnd = subscriptionEndsBy(stored.createdAt, stored.keyExpiresOn);
	if (keyEnd !== undefined && keyEnd.getTime() <= Date.now()) {
		context.logger.info(
			`Invoicing & Assets Trigger: forgot subscription ${id}, created with ${madeWith}; that key has expired, and the subscription with it`,
			logContext(context),
		);
		return;
	}
	const deleted = await removeSubscription(context, client, id).then(
		(outcome) => ({ outcome, failure: undefined as unknown }),
		(failure: unknown) => ({ outcome: undefined, failure }),
	);
	if (deleted.outcome === 'deleted') {
		context.logger.info(
			`Invoicing & Assets Trigger: deleted subscription ${id}, created with ${madeWith}; the current credential could delete it`,
			logContext(context),
		);
		return;
	}
	const endsBy = toServiceTimestamp(new Date(Date.now() + DELIVERY_RETRIES_END_WITHIN_MS));
	retireSubscription(staticData, {
		subscriptionId: id,
		deliveryKeyHash: stored.deliveryKeyHash,
		clientId: stored.clientId ?? '',
		endsBy,
	});
	const until = keyEnd === undefined ? '' : `, at the latest ${toServiceTimestamp(keyEnd)}`;
	const outcome =
		deleted.failure === undefined
			? 'The current credential cannot delete it (the service shows a subscription only to the key that created it)'
			: `The current credential could not delete it (${messageOf(deleted.failure)})`;
	const message = `Invoicing & Assets Trigger: subscription ${id} was created with ${madeWith}. ${outcome}; it ends with that key${until}. For a day after this workflow's new subscription is made, the trigger lets in what it still delivers (the service's retries of what it could not deliver meanwhile); after that it refuses its deliveries. Delete the old key in the identity portal once that day is over`;
	if (deleted.failure === undefined) context.logger.info(message, logContext(context));
	else context.logger.warn(message, logContext(context));
}
