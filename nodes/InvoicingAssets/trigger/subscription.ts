/**
 * The webhook trigger's subscription at the service: its checkExists, create and delete, each an
 * entry point that reads top to bottom, followed by the steps they share. What the trigger keeps
 * in static data and whose a stored subscription is: state.ts; the delivery key: deliveryKey.ts.
 */
import type { IDataObject, IHookFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { CHOOSE_EVENT_TYPES, selectedEventTypes } from '../shared/events';
import { ServiceClient } from '../transport';
import {
	DELIVERY_RETRIES_END_WITHIN_MS,
	isHttpsAddress,
	paths,
	SERVICE_TIME_HEADER,
	SUBSCRIPTION_NOT_FOUND_ERROR,
	toServiceTimestamp,
	type Subscription,
	type SubscriptionRequest,
} from '../transport/contract';
import { httpStatusOf } from '../transport/errors';
import { withDeliveryKey, withoutDeliveryKey } from '../transport/notificationUrl';
import {
	readCreatedSubscriptionId,
	readHeader,
	readHttpDate,
	readServiceTime,
} from '../transport/responses';
import { baseUrlOf, clientIdOf } from '../transport/tokenBinding';
import { carriesKeyHash, generateDeliveryKey, hashDeliveryKey } from './deliveryKey';
import {
	forgetSubscription,
	logLine,
	noteReplacement,
	ownershipOf,
	readStoredSubscription,
	retireSubscription,
	storeSubscription,
	type StoredSubscription,
} from './state';

export const WEBHOOK_NAME = 'default';

/**
 * checkExists: true only when the subscription this trigger created still exists for its current
 * URL, with its delivery key and the selected events. Otherwise it is deleted before it is
 * forgotten: listed for an address n8n no longer uses (e.g. N8N_WEBHOOK_URL changed) or for other
 * events, or not listed, in case the list does not show everything. One of another workflow or
 * another API key is left to its owner (endStoredSubscription).
 */
export async function subscriptionExists(this: IHookFunctions): Promise<boolean> {
	const staticData = this.getWorkflowStaticData('node');
	const client = new ServiceClient(this);
	const stored = readStoredSubscription(staticData);
	if (!stored) return false;
	const credentials = await client.credentials();
	if (ownershipOf(stored, this.getWorkflow().id, credentials).owner !== 'this trigger') {
		await endStoredSubscription(this, client, staticData);
		return false;
	}
	const listed = await client.listSubscriptions();
	const ours = listed.find((subscription) => subscription.id === stored.subscriptionId);
	if (ours && !carriesKeyHash(ours, stored.deliveryKeyHash)) {
		// Listed under this ID, but without this trigger's key: not this trigger's to delete.
		forgetSubscription(staticData);
		return false;
	}
	if (
		ours &&
		sameAddress(ours.notificationUrl, this.getNodeWebhookUrl(WEBHOOK_NAME)) &&
		sameEventTypes(ours.eventTypes, requireEventTypes(this))
	) {
		return true;
	}
	await removeSubscription(this, client, stored.subscriptionId);
	forgetSubscription(staticData);
	return false;
}

/**
 * create: a new subscription with a new delivery key; stores the ID and the key's SHA-256 only,
 * and gives a replaced key's subscriptions the service's time of their replacement (state.ts).
 */
export async function createSubscription(this: IHookFunctions): Promise<boolean> {
	const webhookUrl = requireHttpsWebhookUrl(this);
	const eventTypes = requireEventTypes(this);
	const staticData = this.getWorkflowStaticData('node');
	const client = new ServiceClient(this);
	await endStoredSubscription(this, client, staticData);

	const credentials = await client.credentials();
	const deliveryKey = generateDeliveryKey();
	const description = String(this.getNodeParameter('options.description', '')).trim();
	const request: SubscriptionRequest = {
		notificationUrl: withDeliveryKey(webhookUrl, deliveryKey),
		eventTypes,
		description: description === '' ? null : description,
	};
	const made = await client
		.requestFull({ method: 'POST', path: paths.subscriptions, body: { ...request } })
		.then(
			async (response) => {
				const id = readCreatedSubscriptionId(response.body);
				const madeAt = readHttpDate(readHeader(response.headers, SERVICE_TIME_HEADER));
				return id ? { id, madeAt } : await adoptLostCreate(this, client, deliveryKey, undefined);
			},
			async (error: unknown) => await adoptLostCreate(this, client, deliveryKey, error),
		);
	storeSubscription(staticData, {
		subscriptionId: made.id,
		deliveryKeyHash: hashDeliveryKey(deliveryKey),
		workflowId: this.getWorkflow().id,
		clientId: clientIdOf(credentials),
		baseUrl: baseUrlOf(credentials),
	});
	if (made.madeAt !== undefined) {
		noteReplacement(staticData, toServiceTimestamp(new Date(made.madeAt)), retiringEnd());
	}
	return true;
}

/**
 * delete: removes the stored subscription (already gone counts as removed) and forgets it; one
 * another key made may be left to end with its key (endStoredSubscription).
 */
export async function deleteSubscription(this: IHookFunctions): Promise<boolean> {
	const client = new ServiceClient(this);
	await endStoredSubscription(this, client, this.getWorkflowStaticData('node'));
	return true;
}

/** n8n's webhook URL for this trigger; refused unless it is https, because the service delivers nowhere else. */
function requireHttpsWebhookUrl(context: IHookFunctions): string {
	const webhookUrl = context.getNodeWebhookUrl(WEBHOOK_NAME) ?? '';
	const which = context.getActivationMode() === 'manual' ? 'test' : 'production';
	if (!isHttpsAddress(webhookUrl)) {
		throw new NodeOperationError(
			context.getNode(),
			// n8n shows only the message of a failed publish: it says the fix too.
			`The ${which} webhook URL must start with https://: set N8N_WEBHOOK_URL to n8n’s public https address`,
			{
				description: `n8n’s ${which} webhook URL for this trigger is ${webhookUrl}, but the Data Service delivers only over HTTPS (TLS 1.2 or later). Set N8N_WEBHOOK_URL to n8n’s public https address (e.g. behind a TLS-terminating reverse proxy), or serve n8n over HTTPS with N8N_PROTOCOL=https, N8N_SSL_KEY and N8N_SSL_CERT: see "Setting up n8n's address" in the README.`,
			},
		);
	}
	return webhookUrl;
}

/** The service's `eventTypes` for the Events parameter; an empty selection is refused, never read as "all". */
function requireEventTypes(context: IHookFunctions): string[] | null {
	const eventTypes = selectedEventTypes(context.getNodeParameter('events', []));
	if (eventTypes === undefined) {
		throw new NodeOperationError(
			context.getNode(),
			`No Events are selected: ${CHOOSE_EVENT_TYPES}`,
			{
				description:
					'The trigger subscribes only to the events chosen under Events. Choose the events that should start the workflow, or All Events to receive every event, including types added later, then publish again.',
			},
		);
	}
	return eventTypes;
}

/** Whether a listed subscription takes exactly the selected events (null: every event). */
function sameEventTypes(listed: unknown, selected: string[] | null): boolean {
	if (listed === null || listed === undefined || selected === null) {
		return (listed === null || listed === undefined) && selected === null;
	}
	if (!Array.isArray(listed)) return false;
	const wanted = new Set(selected);
	return new Set(listed).size === wanted.size && listed.every((type) => wanted.has(type));
}

/** Whether a subscription's address (key aside) is n8n's webhook URL; an unreadable one is not judged. */
function sameAddress(notificationUrl: unknown, webhookUrl: string | undefined): boolean {
	const listed = withoutDeliveryKey(String(notificationUrl ?? ''));
	const current = withoutDeliveryKey(webhookUrl ?? '');
	return listed === undefined || current === undefined || listed === current;
}

/**
 * The create failed, or answered without a readable ID: the service may have made the subscription
 * all the same. Only this call knows the new key, so a subscription carrying it, on any page of
 * the list, is adopted; otherwise the create's failure is thrown, and n8n tries again.
 */
async function adoptLostCreate(
	context: IHookFunctions,
	client: ServiceClient,
	deliveryKey: string,
	failure: unknown,
): Promise<{ id: string; madeAt: number | undefined }> {
	const keyHash = hashDeliveryKey(deliveryKey);
	const listed: Subscription[] = await client.listSubscriptions().catch((listFailure: unknown) => {
		throw failure ?? listFailure;
	});
	const adopted = listed.find((subscription) => carriesKeyHash(subscription, keyHash));
	if (adopted) return { id: adopted.id, madeAt: readServiceTime(adopted.createdAt) };
	if (failure !== undefined) throw failure;
	throw new NodeOperationError(
		context.getNode(),
		'The service answered without the new subscription’s ID',
		{
			description:
				'No subscription for this trigger exists at the service either, so nothing was registered. n8n will try again; if this persists, the Data Service’s answer format may have changed: please report it.',
		},
	);
}

/**
 * Ends the stored subscription and forgets it, so that publishing and unpublishing never fail
 * because of whose it is. This trigger's is deleted (a failure is thrown, and it stays stored);
 * another workflow's is left untouched; another key's is deleted if the current key can, else
 * left to end with its own key (leaveToItsKey).
 */
async function endStoredSubscription(
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
 * A subscription another API key (or Base URL) made: the contract lets only that key delete it.
 * Unless the current key can after all, it is kept as retiring (state.ts), so that the service's
 * retries of what fell between unpublish and publish are let in. Nothing is thrown: the log says it.
 */
async function leaveToItsKey(
	context: IHookFunctions,
	client: ServiceClient,
	staticData: IDataObject,
	stored: StoredSubscription,
	madeWith: string,
): Promise<void> {
	const id = stored.subscriptionId;
	const outcome = await removeSubscription(context, client, id).catch(
		(error: unknown) => (error as Error).message,
	);
	if (outcome === 'deleted') {
		logLine(context, 'info', `deleted subscription ${id}, created with ${madeWith}`);
		return;
	}
	retireSubscription(staticData, {
		subscriptionId: id,
		deliveryKeyHash: stored.deliveryKeyHash,
		endsBy: retiringEnd(),
	});
	const failed = outcome === 'not found' ? '' : ` (its delete failed: ${outcome})`;
	logLine(
		context,
		failed === '' ? 'info' : 'warn',
		`subscription ${id} was created with ${madeWith}${failed}; it ends with that key, and its deliveries are let in for a day`,
	);
}

/** When a replaced key's subscription is refused, counted from its retirement or replacement now. */
function retiringEnd(): string {
	return toServiceTimestamp(new Date(Date.now() + DELIVERY_RETRIES_END_WITHIN_MS));
}

/**
 * Deletes a subscription: 'deleted', or 'not found' when the service does not know it (for this
 * API key), which counts as deleted too. A 404 that does not say the subscription is unknown may
 * come from a wrong path or a gateway: then the list decides. Other failures are thrown (n8n
 * retries the delete).
 */
async function removeSubscription(
	context: IHookFunctions,
	client: ServiceClient,
	subscriptionId: string,
): Promise<'deleted' | 'not found'> {
	const failure = await client
		.request({
			method: 'DELETE',
			path: paths.subscription(subscriptionId),
			subject: `Subscription '${subscriptionId}'`,
		})
		.then(
			() => undefined,
			(error: unknown) => error,
		);
	if (failure === undefined) return 'deleted';
	if (httpStatusOf(failure) !== 404) throw failure;
	const code = (failure as { errorResponse?: { code?: unknown } }).errorResponse?.code;
	if (code === SUBSCRIPTION_NOT_FOUND_ERROR) return 'not found';
	const listed = await client.listSubscriptions();
	if (!listed.some((subscription) => subscription.id === subscriptionId)) return 'not found';
	throw new NodeOperationError(
		context.getNode(),
		`The delete did not reach subscription '${subscriptionId}': the service answered 404 but still lists it, so its delete address may differ from the package’s service contract`,
		{
			description: `The trigger deleted it with DELETE {Base URL}${paths.subscription(subscriptionId)}, and the answer was a 404 that does not say the subscription is unknown (such as a gateway’s answer to an address it does not know). The subscription still exists and still sends events to this webhook URL; n8n keeps its ID and tries again. The package’s assumptions about the service are listed in docs/service-contract.md in its repository. Please report this with the service’s answer.`,
		},
	);
}
