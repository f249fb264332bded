import type { IDataObject, IHookFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { selectedEventTypes } from '../shared/events';
import { ServiceClient } from '../transport';
import {
	NOTIFICATION_URL_PROTOCOL,
	paths,
	readCreatedSubscriptionId,
	readDeliveryKey,
	readSubscriptions,
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

/** n8n's webhook URL for this trigger; refused unless it is https, because the service delivers nowhere else. */
export function requireHttpsWebhookUrl(context: IHookFunctions): string {
	const webhookUrl = context.getNodeWebhookUrl(WEBHOOK_NAME) ?? '';
	const which = context.getActivationMode() === 'manual' ? 'test' : 'production';
	if (!URL.canParse(webhookUrl) || new URL(webhookUrl).protocol !== NOTIFICATION_URL_PROTOCOL) {
		throw new NodeOperationError(
			context.getNode(),
			`The ${which} webhook URL must start with https://: the Data Service delivers only over TLS 1.2 or later`,
			{ description: `n8n’s ${which} webhook URL for this trigger is ${webhookUrl}. ${HTTPS_FIX}` },
		);
	}
	return webhookUrl;
}

/** checkExists: true only when the subscription this trigger created still exists for its current URL. */
export async function subscriptionExists(context: IHookFunctions): Promise<boolean> {
	const staticData = context.getWorkflowStaticData('node');
	const stored = readStoredSubscription(staticData);
	if (!stored) return false;
	const client = new ServiceClient(context);
	const listed = await listSubscriptions(client);
	const ours = listed.find((subscription) => subscription.id === stored.subscriptionId);
	if (ours && sameAddress(ours.notificationUrl, context.getNodeWebhookUrl(WEBHOOK_NAME))) {
		return true;
	}
	// Ours, but delivering to an address n8n no longer uses (e.g. N8N_WEBHOOK_URL changed).
	if (ours) await removeSubscription(client, ours.id);
	forgetSubscription(staticData);
	return false;
}

/** create: a new subscription with a new delivery key; stores the ID and the key's SHA-256 only. */
export async function createSubscription(context: IHookFunctions): Promise<void> {
	const webhookUrl = requireHttpsWebhookUrl(context);
	const staticData = context.getWorkflowStaticData('node');
	const client = new ServiceClient(context);
	const previous = readStoredSubscription(staticData);
	if (previous) await removeSubscription(client, previous.subscriptionId);
	forgetSubscription(staticData);

	const deliveryKey = generateDeliveryKey();
	const options = context.getNodeParameter('options', {}) as IDataObject;
	const request: SubscriptionRequest = {
		notificationUrl: withDeliveryKey(webhookUrl, deliveryKey),
		eventTypes: selectedEventTypes(context.getNodeParameter('events', [])),
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
	if (stored) await removeSubscription(new ServiceClient(context), stored.subscriptionId);
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

	const lookup = await listSubscriptions(client).then(
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
				'The service answered without the new subscription’s ID',
				{ description: note },
			);
		}
		throw withNote(failure, note);
	}
	const [adopted, ...copies] = lookup.ours;
	for (const copy of copies) {
		const leftover = await removeSubscription(client, copy.id).then(
			() => undefined,
			(error: unknown) => error,
		);
		if (leftover !== undefined) {
			throw withNote(
				leftover,
				`Subscriptions ${lookup.ours.map((item) => item.id).join(', ')} were all created for this trigger and could not all be removed: delete them with the Invoicing & Assets node. n8n will create a new one.`,
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

async function listSubscriptions(client: ServiceClient): Promise<Subscription[]> {
	return readSubscriptions(await client.request({ method: 'GET', path: paths.subscriptions }));
}

/** Deletes a subscription; one that no longer exists counts as deleted. Other failures are thrown. */
async function removeSubscription(client: ServiceClient, subscriptionId: string): Promise<void> {
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
	if (failure !== undefined && httpStatusOf(failure) !== 404) throw failure;
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

/** The error with `note` added to its description (shown under the message in n8n). */
function withNote(error: unknown, note: string): unknown {
	if (typeof error !== 'object' || error === null) return error;
	const described = error as { description?: unknown };
	const before = typeof described.description === 'string' ? `${described.description} ` : '';
	described.description = `${before}${note}`;
	return error;
}
