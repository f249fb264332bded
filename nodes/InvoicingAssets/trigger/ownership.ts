import type { IDataObject, IHookFunctions } from 'n8n-workflow';

import {
	API_KEY_MAX_LIFETIME_MONTHS,
	subscriptionEndsBy,
	toServiceTimestamp,
} from '../transport/contract';
import type { ServiceClient } from '../transport';
import {
	forgetSubscription,
	readStoredSubscription,
	retireSubscription,
	type StoredSubscription,
} from './state';

/** A URL as the credential holds it, trimmed and without trailing slashes, to compare. */
export function comparableUrl(url: unknown): string {
	return String(url ?? '')
		.trim()
		.replace(/\/+$/, '');
}

/** What n8n's log says about this trigger, so that a line names the workflow and the node. */
export function logContext(context: IHookFunctions) {
	return { workflowId: context.getWorkflow().id, node: context.getNode().name };
}

/**
 * The stored subscription, when this trigger may and can delete it; otherwise it is forgotten
 * and undefined returned, so that publishing and unpublishing never fail because of it:
 * - stored by another workflow (its static data was copied, e.g. by an import): it is that
 *   workflow's, and is left untouched;
 * - created with an API key or Base URL the credential no longer holds (the key was replaced, or
 *   the environment switched): this key cannot reach it (the service answers 404), and it ends
 *   with its own key. It is kept as retiring (state.ts), so that the events it still delivers
 *   are let in once; n8n's log says so. When its key has certainly expired it is simply forgotten.
 */
export async function reachableStoredSubscription(
	context: IHookFunctions,
	client: ServiceClient,
	staticData: IDataObject,
): Promise<StoredSubscription | undefined> {
	const stored = readStoredSubscription(staticData);
	if (!stored) return undefined;
	if (stored.workflowId !== undefined && stored.workflowId !== context.getWorkflow().id) {
		forgetSubscription(staticData);
		return undefined;
	}
	if (stored.clientId === undefined) return stored;
	const credentials = await client.credentials();
	const clientId = String(credentials.clientId ?? '').trim();
	const baseUrl = comparableUrl(credentials.baseUrl);
	if (stored.clientId === clientId && (stored.baseUrl ?? baseUrl) === baseUrl) return stored;

	forgetSubscription(staticData);
	const endsBy = subscriptionEndsBy(stored.createdAt, stored.keyExpiresOn) ?? latestKeyEnd();
	const other =
		stored.clientId === clientId
			? `the Base URL ${stored.baseUrl ?? ''}, which the credential no longer uses`
			: `the API key with client ID '${stored.clientId}', which the credential no longer holds`;
	if (endsBy.getTime() <= Date.now()) {
		context.logger.info(
			`Invoicing & Assets Trigger: forgot subscription ${stored.subscriptionId}, created with ${other}; that key has expired, and the subscription with it`,
			logContext(context),
		);
		return undefined;
	}
	retireSubscription(staticData, {
		subscriptionId: stored.subscriptionId,
		deliveryKeyHash: stored.deliveryKeyHash,
		clientId: stored.clientId,
		endsBy: toServiceTimestamp(endsBy),
	});
	context.logger.info(
		`Invoicing & Assets Trigger: subscription ${stored.subscriptionId} was created with ${other}. The current credential cannot delete it (the service shows a subscription only to the key that created it); it ends with that key, at the latest ${toServiceTimestamp(endsBy)}. Until then the trigger lets in what it delivers of the events from before its new subscription, once, and ignores the rest`,
		logContext(context),
	);
	return undefined;
}

/** Twelve months from now: the latest a key of unknown age can still work. */
function latestKeyEnd(): Date {
	const latest = new Date();
	latest.setUTCMonth(latest.getUTCMonth() + API_KEY_MAX_LIFETIME_MONTHS);
	return latest;
}
