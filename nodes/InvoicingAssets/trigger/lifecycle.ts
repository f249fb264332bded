import type { IDataObject, IHookFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { CHOOSE_EVENT_TYPES, selectedEventTypes } from '../shared/events';
import { ServiceClient } from '../transport';
import {
	NOTIFICATION_URL_PROTOCOL,
	paths,
	readCreatedSubscriptionId,
	readDeliveryKey,
	SUBSCRIPTION_NOT_FOUND_ERROR,
	withDeliveryKey,
	withoutDeliveryKey,
	type Subscription,
	type SubscriptionRequest,
} from '../transport/contract';
import { deliveryKeyMatches, generateDeliveryKey, hashDeliveryKey } from './deliveryKey';
import { forgetSubscription, readStoredSubscription, storeSubscription } from './state';

export const WEBHOOK_NAME = 'default';

const HTTPS_FIX =
	'The Data Service delivers events only over HTTPS secured with TLS 1.2 or later; it refuses plain http addresses. ' +
	'To fix it, give n8n a public https address: set N8N_WEBHOOK_URL to it (for example https://n8n.example.com/), ' +
	'or serve n8n over HTTPS itself with N8N_PROTOCOL=https plus N8N_SSL_KEY and N8N_SSL_CERT, ' +
	'or put n8n behind a TLS-terminating reverse proxy and set N8N_WEBHOOK_URL to the proxy’s https address. ' +
	'The editor’s test URL (used while you test this step with "Execute step") follows the same rule as the production URL.';

/** The essence of HTTPS_FIX, for the message: n8n shows only the message of a failed publish. */
const SET_PUBLIC_HTTPS_ADDRESS = 'Set N8N_WEBHOOK_URL to n8n’s public https address.';

/** Where users find what the package assumes about the service. */
const SEE_SERVICE_CONTRACT =
	'The package’s assumptions about the service are listed under “Service contract” in its README.';

/** For subscriptions the trigger may have left behind without their key. */
const DELETE_UNUSED =
	'delete any subscription for this trigger’s webhook URL that n8n does not use (Invoicing & Assets node: Subscription → Get Many, then Delete)';

/** n8n's webhook URL for this trigger; refused unless it is https, because the service delivers nowhere else. */
export function requireHttpsWebhookUrl(context: IHookFunctions): string {
	const webhookUrl = context.getNodeWebhookUrl(WEBHOOK_NAME) ?? '';
	const which = context.getActivationMode() === 'manual' ? 'test' : 'production';
	if (!URL.canParse(webhookUrl) || new URL(webhookUrl).protocol !== NOTIFICATION_URL_PROTOCOL) {
		throw new NodeOperationError(
			context.getNode(),
			`The ${which} webhook URL must start with https://: the Data Service delivers only over TLS 1.2 or later. ${SET_PUBLIC_HTTPS_ADDRESS}`,
			{ description: `n8n’s ${which} webhook URL for this trigger is ${webhookUrl}. ${HTTPS_FIX}` },
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

/**
 * checkExists: true only when the subscription this trigger created still exists for its current
 * URL. Otherwise it is deleted before it is forgotten: listed for an address n8n no longer uses
 * (e.g. N8N_WEBHOOK_URL changed), or not listed, in case the list does not show everything.
 */
export async function subscriptionExists(context: IHookFunctions): Promise<boolean> {
	const staticData = context.getWorkflowStaticData('node');
	const stored = readStoredSubscription(staticData);
	if (!stored) return false;
	const client = new ServiceClient(context);
	const listed = await client.listSubscriptions();
	const ours = listed.find((subscription) => subscription.id === stored.subscriptionId);
	if (ours && sameAddress(ours.notificationUrl, context.getNodeWebhookUrl(WEBHOOK_NAME))) {
		return true;
	}
	await removeSubscription(context, client, stored.subscriptionId);
	forgetSubscription(staticData);
	return false;
}

/** create: a new subscription with a new delivery key; stores the ID and the key's SHA-256 only. */
export async function createSubscription(context: IHookFunctions): Promise<void> {
	const webhookUrl = requireHttpsWebhookUrl(context);
	const eventTypes = requireEventTypes(context);
	const staticData = context.getWorkflowStaticData('node');
	const client = new ServiceClient(context);
	const previous = readStoredSubscription(staticData);
	if (previous) await removeSubscription(context, client, previous.subscriptionId);
	forgetSubscription(staticData);

	const deliveryKey = generateDeliveryKey();
	const options = context.getNodeParameter('options', {}) as IDataObject;
	const request: SubscriptionRequest = {
		notificationUrl: withDeliveryKey(webhookUrl, deliveryKey),
		eventTypes,
		description:
			typeof options.description === 'string' && options.description.trim() !== ''
				? options.description.trim()
				: null,
	};
	const outcome = await client
		.request({ method: 'POST', path: paths.subscriptions, body: { ...request } })
		.then(
			(body) => ({ id: readCreatedSubscriptionId(body), failure: undefined }),
			(error: unknown) => ({ id: undefined, failure: error }),
		);
	const subscriptionId =
		outcome.id ?? (await settleUnconfirmedCreate(context, client, deliveryKey, outcome.failure));
	storeSubscription(staticData, {
		subscriptionId,
		deliveryKeyHash: hashDeliveryKey(deliveryKey),
	});
}

/** delete: removes the stored subscription (already gone counts as removed) and forgets it. */
export async function deleteSubscription(context: IHookFunctions): Promise<void> {
	const staticData = context.getWorkflowStaticData('node');
	const stored = readStoredSubscription(staticData);
	if (stored) await removeSubscription(context, new ServiceClient(context), stored.subscriptionId);
	forgetSubscription(staticData);
}

/**
 * The create call failed, or succeeded without an ID the node can read. The service may have
 * created the subscription all the same (an answer lost on the way back). Only this call knows
 * the new delivery key, so a subscription carrying it is certainly ours: it is adopted, and any
 * further copy deleted. Without one, the failure is thrown and nothing is left behind.
 */
async function settleUnconfirmedCreate(
	context: IHookFunctions,
	client: ServiceClient,
	deliveryKey: string,
	failure: unknown,
): Promise<string> {
	// A refusal (4xx) means the service created nothing.
	const status = httpStatusOf(failure);
	if (status !== undefined && status >= 400 && status < 500) throw failure;

	const lookup = await client.listSubscriptions().then(
		(listed) => ({
			ours: listed.filter((item) => carriesKey(item, deliveryKey)),
			error: undefined,
		}),
		(error: unknown) => ({ ours: [], error }),
	);
	if (lookup.error !== undefined) {
		const note =
			`The node could not check whether the service created the subscription anyway (${messageOf(lookup.error)}). ` +
			'If it did, that subscription can never start this workflow, because its key was not kept: ' +
			'list the subscriptions with the Invoicing & Assets node and delete the ones for this trigger’s webhook URL that n8n does not use.';
		if (failure === undefined) {
			throw new NodeOperationError(
				context.getNode(),
				`The service answered without the new subscription’s ID, and the node could not check whether it created one: ${DELETE_UNUSED}`,
				{ description: note },
			);
		}
		throw withAdvice(
			failure,
			`the node could not check whether the service created the subscription anyway: ${DELETE_UNUSED}`,
			note,
		);
	}
	const [adopted, ...copies] = lookup.ours;
	for (const copy of copies) {
		const leftover = await removeSubscription(context, client, copy.id).then(
			() => undefined,
			(error: unknown) => error,
		);
		if (leftover !== undefined) {
			const ids = lookup.ours.map((item) => item.id).join(', ');
			throw withAdvice(
				leftover,
				`subscriptions ${ids} were all created for this trigger and not all could be removed: delete them with the Invoicing & Assets node`,
				`Subscriptions ${ids} were all created for this trigger and could not all be removed: delete them with the Invoicing & Assets node (Subscription → Delete). n8n will create a new one.`,
			);
		}
	}
	if (adopted) return adopted.id;
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
 * Deletes a subscription; one that is gone counts as deleted. A 404 that does not say the
 * subscription is unknown may come from a wrong path or a gateway: then the list decides.
 * Other failures are thrown (n8n retries the delete).
 */
async function removeSubscription(
	context: IHookFunctions,
	client: ServiceClient,
	subscriptionId: string,
): Promise<void> {
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
	if (failure === undefined) return;
	if (httpStatusOf(failure) !== 404) throw failure;
	if (saysSubscriptionNotFound(failure)) return;
	const listed = await client.listSubscriptions();
	if (!listed.some((subscription) => subscription.id === subscriptionId)) return;
	throw new NodeOperationError(
		context.getNode(),
		`The delete did not reach subscription '${subscriptionId}': the service answered 404 but still lists it, so its delete address may differ from the package’s service contract`,
		{
			description: `The trigger deleted it with DELETE {Base URL}${paths.subscription(subscriptionId)}, and the answer was a 404 that does not say the subscription is unknown (such as a gateway’s answer to an address it does not know). The subscription still exists and still sends events to this webhook URL; n8n keeps its ID and tries again. ${SEE_SERVICE_CONTRACT} Please report this with the service’s answer.`,
		},
	);
}

/** Whether a failed call's error carries the service's "subscription not found" code. */
export function saysSubscriptionNotFound(error: unknown): boolean {
	const response = (error as { errorResponse?: { code?: unknown } } | undefined)?.errorResponse;
	return response?.code === SUBSCRIPTION_NOT_FOUND_ERROR;
}

function carriesKey(subscription: Subscription, deliveryKey: string): boolean {
	return deliveryKeyMatches(
		readDeliveryKey(String(subscription.notificationUrl ?? '')),
		hashDeliveryKey(deliveryKey),
	);
}

/** Whether a subscription's address (key aside) is n8n's webhook URL; an unreadable one is not judged. */
function sameAddress(notificationUrl: unknown, webhookUrl: string | undefined): boolean {
	const listed = withoutDeliveryKey(String(notificationUrl ?? ''));
	const current = withoutDeliveryKey(webhookUrl ?? '');
	return listed === undefined || current === undefined || listed === current;
}

/** The HTTP status of a NodeApiError from the transport, if it has one. */
function httpStatusOf(error: unknown): number | undefined {
	const code = Number((error as { httpCode?: unknown } | undefined)?.httpCode);
	return Number.isInteger(code) && code >= 100 ? code : undefined;
}

function messageOf(error: unknown): string {
	const message = (error as { message?: unknown } | undefined)?.message;
	return typeof message === 'string' ? message : String(error);
}

/**
 * The error with `advice` added to its message (all n8n shows of a failed publish) and `note` to
 * its description (shown under the message elsewhere).
 */
function withAdvice(error: unknown, advice: string, note: string): unknown {
	if (typeof error !== 'object' || error === null) return error;
	const described = error as { message?: unknown; description?: unknown };
	const message = typeof described.message === 'string' ? described.message : '';
	described.message = message === '' ? advice : `${message.replace(/[.:;\s]+$/, '')}; ${advice}`;
	const before = typeof described.description === 'string' ? `${described.description} ` : '';
	described.description = `${before}${note}`;
	return error;
}
