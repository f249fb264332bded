import type { IDataObject, IHookFunctions } from 'n8n-workflow';
import { NodeOperationError, sleep } from 'n8n-workflow';

import { CHOOSE_EVENT_TYPES, selectedEventTypes } from '../shared/events';
import { ServiceClient } from '../transport';
import {
	LATE_CREATE_RECHECK_DELAYS_MS,
	NOTIFICATION_URL_PROTOCOL,
	paths,
	SUBSCRIPTION_NOT_FOUND_ERROR,
	subscriptionEndsBy,
	toServiceTimestamp,
	type Subscription,
	type SubscriptionRequest,
} from '../transport/contract';
import { readCreatedSubscriptionId } from '../transport/responses';
import { readDeliveryKey, withDeliveryKey, withoutDeliveryKey } from '../transport/notificationUrl';
import { deliveryKeyMatches, generateDeliveryKey, hashDeliveryKey } from './deliveryKey';
import {
	forgetSubscription,
	readStoredSubscription,
	storeSubscription,
	type StoredSubscription,
} from './state';

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
	'The package’s assumptions about the service are listed in docs/service-contract.md in its repository.';

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
 * URL, with its delivery key and the selected events. Otherwise it is deleted before it is
 * forgotten: listed for an address n8n no longer uses (e.g. N8N_WEBHOOK_URL changed) or for other
 * events, or not listed, in case the list does not show everything. A subscription stored by
 * another workflow (copied static data) is never touched; one of another API key is named in an
 * error, since this key cannot delete it.
 */
export async function subscriptionExists(context: IHookFunctions): Promise<boolean> {
	const staticData = context.getWorkflowStaticData('node');
	const client = new ServiceClient(context);
	const stored = await reachableStoredSubscription(context, client, staticData);
	if (!stored) return false;
	const listed = await client.listSubscriptions();
	const ours = listed.find((subscription) => subscription.id === stored.subscriptionId);
	if (ours && !carriesKeyHash(ours, stored.deliveryKeyHash)) {
		// Listed under this ID, but without this trigger's key: not this trigger's to delete.
		forgetSubscription(staticData);
		return false;
	}
	if (
		ours &&
		sameAddress(ours.notificationUrl, context.getNodeWebhookUrl(WEBHOOK_NAME)) &&
		sameEventTypes(ours.eventTypes, requireEventTypes(context))
	) {
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
	const previous = await reachableStoredSubscription(context, client, staticData);
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
	const credentials = await client.credentials();
	const keyExpiresOn = String(credentials.keyExpiresOn ?? '').trim();
	storeSubscription(staticData, {
		subscriptionId,
		deliveryKeyHash: hashDeliveryKey(deliveryKey),
		workflowId: context.getWorkflow().id,
		clientId: String(credentials.clientId ?? '').trim(),
		baseUrl: comparableUrl(credentials.baseUrl),
		createdAt: toServiceTimestamp(new Date()),
		keyExpiresOn: keyExpiresOn === '' ? undefined : keyExpiresOn,
	});
}

/** delete: removes the stored subscription (already gone counts as removed) and forgets it. */
export async function deleteSubscription(context: IHookFunctions): Promise<void> {
	const staticData = context.getWorkflowStaticData('node');
	const client = new ServiceClient(context);
	const stored = await reachableStoredSubscription(context, client, staticData);
	if (stored) await removeSubscription(context, client, stored.subscriptionId);
	forgetSubscription(staticData);
}

/**
 * The stored subscription, when this trigger may and can delete it. Stored by another workflow
 * (its static data was copied, e.g. by an import): it is that workflow's, and is forgotten here
 * untouched. Created with another API key or Base URL (the key was replaced, or the credential
 * switched environment): this key cannot reach it, so the trigger stops with an error that names
 * it, unless that key has certainly expired (the subscription ended with it).
 */
async function reachableStoredSubscription(
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
	const endsBy = subscriptionEndsBy(stored.createdAt, stored.keyExpiresOn);
	if (endsBy && endsBy.getTime() <= Date.now()) {
		forgetSubscription(staticData);
		return undefined;
	}
	throw anotherKeysSubscription(context, stored, clientId, endsBy);
}

function anotherKeysSubscription(
	context: IHookFunctions,
	stored: StoredSubscription,
	clientId: string,
	endsBy: Date | undefined,
): NodeOperationError {
	const other =
		stored.clientId === clientId
			? `the Base URL ${stored.baseUrl ?? ''} (the credential now uses another one)`
			: `the API key with client ID '${stored.clientId}' (the credential now has client ID '${clientId}')`;
	const until = endsBy
		? ` It keeps sending events to this trigger, which refuses them, until that key expires (at the latest ${toServiceTimestamp(endsBy)}); from then on the trigger forgets it by itself.`
		: '';
	return new NodeOperationError(
		context.getNode(),
		`Subscription '${stored.subscriptionId}' of this trigger was created with ${other}, which the current credential cannot reach or delete`,
		{
			description: `The Data Service answers for a subscription only to the API key (and environment) that created it.${until} To remove it: put that key back into the credential (Client ID '${stored.clientId}', its secret and Base URL), unpublish the workflow so that the trigger deletes the subscription, then enter the new key and publish again. If you no longer have that key, delete subscription '${stored.subscriptionId}' in the provider's portal or ask the provider to.`,
		},
	);
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

	// The service may make it a moment after the failure: look again a few times before
	// concluding that it made none.
	let lookup = await lookForKey(client, deliveryKey);
	for (const delay of LATE_CREATE_RECHECK_DELAYS_MS) {
		if (lookup.error !== undefined || lookup.ours.length > 0) break;
		await sleep(delay);
		lookup = await lookForKey(client, deliveryKey);
	}
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
	if (failure !== undefined) {
		throw withAdvice(
			failure,
			`no subscription for it showed up at the service; should one show up later, ${DELETE_UNUSED}`,
			`The node looked for the subscription ${LATE_CREATE_RECHECK_DELAYS_MS.length + 1} times over ${LATE_CREATE_RECHECK_DELAYS_MS.reduce((sum, ms) => sum + ms, 0) / 1000} s and found none, so nothing was registered; n8n will try again. Should the service still make it later, it can never start this workflow (its key was not kept): ${DELETE_UNUSED}.`,
		);
	}
	throw new NodeOperationError(
		context.getNode(),
		'The service answered without the new subscription’s ID',
		{
			description:
				'No subscription for this trigger exists at the service either, so nothing was registered. n8n will try again; if this persists, the Data Service’s answer format may have changed: please report it.',
		},
	);
}

/** The subscriptions that carry `deliveryKey`, or why the list could not be read. */
async function lookForKey(
	client: ServiceClient,
	deliveryKey: string,
): Promise<{ ours: Subscription[]; error: unknown }> {
	return await client.listSubscriptions().then(
		(listed) => ({
			ours: listed.filter((item) => carriesKey(item, deliveryKey)),
			error: undefined as unknown,
		}),
		(error: unknown) => ({ ours: [] as Subscription[], error }),
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
	return carriesKeyHash(subscription, hashDeliveryKey(deliveryKey));
}

function carriesKeyHash(subscription: Subscription, deliveryKeyHash: string): boolean {
	return deliveryKeyMatches(
		readDeliveryKey(String(subscription.notificationUrl ?? '')),
		deliveryKeyHash,
	);
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

/** A URL as the credential holds it, trimmed and without trailing slashes, to compare. */
function comparableUrl(url: unknown): string {
	return String(url ?? '')
		.trim()
		.replace(/\/+$/, '');
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
