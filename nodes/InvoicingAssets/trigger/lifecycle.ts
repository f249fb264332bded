import type { IDataObject, IHookFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { CHOOSE_EVENT_TYPES, selectedEventTypes } from '../shared/events';
import { ServiceClient } from '../transport';
import {
	DELIVERY_RETRIES_END_WITHIN_MS,
	NOTIFICATION_URL_PROTOCOL,
	paths,
	SERVICE_TIME_HEADER,
	toServiceTimestamp,
	type SubscriptionRequest,
} from '../transport/contract';
import {
	readCreatedSubscriptionId,
	readHeader,
	readHttpDate,
	readServiceTime,
} from '../transport/responses';
import { withDeliveryKey, withoutDeliveryKey } from '../transport/notificationUrl';
import { baseUrlOf } from '../transport/tokenRenewal';
import { settleUnconfirmedCreate } from './createRecovery';
import { generateDeliveryKey, hashDeliveryKey } from './deliveryKey';
import { keyMakerOf, removeLeftovers } from './leftovers';
import { endStoredSubscription, logContext, ownershipOf } from './ownership';
import { carriesKeyHash, removeSubscription } from './serviceCalls';
import {
	awaitsReplacement,
	forgetSubscription,
	noteReplacement,
	readStoredSubscription,
	storeSubscription,
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

/** Whether the hook registers the production URL (a publish), not the editor's test URL. */
function registersProductionUrl(context: IHookFunctions): boolean {
	return context.getActivationMode() !== 'manual';
}

/** n8n's webhook URL for this trigger; refused unless it is https, because the service delivers nowhere else. */
export function requireHttpsWebhookUrl(context: IHookFunctions): string {
	const webhookUrl = context.getNodeWebhookUrl(WEBHOOK_NAME) ?? '';
	const which = registersProductionUrl(context) ? 'production' : 'test';
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
 * events, or not listed, in case the list does not show everything. One of another workflow or
 * another API key is left to its owner (ownership.ts).
 */
export async function subscriptionExists(context: IHookFunctions): Promise<boolean> {
	const staticData = context.getWorkflowStaticData('node');
	const client = new ServiceClient(context);
	const stored = readStoredSubscription(staticData);
	if (!stored) return false;
	const credentials = await client.credentials();
	if (ownershipOf(stored, context.getWorkflow().id, credentials).owner !== 'this trigger') {
		await endStoredSubscription(context, client, staticData);
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
		sameAddress(ours.notificationUrl, context.getNodeWebhookUrl(WEBHOOK_NAME)) &&
		sameEventTypes(ours.eventTypes, requireEventTypes(context))
	) {
		return true;
	}
	await removeSubscription(context, client, stored.subscriptionId);
	forgetSubscription(staticData);
	return false;
}

/**
 * create: a new subscription with a new delivery key; stores the ID and the key's SHA-256 only.
 * A publish first deletes what this trigger left behind at its webhook URL (leftovers.ts), and
 * afterwards notes the new subscription's creation for a replaced key's subscription that still
 * delivers (state.ts, delivery.ts).
 */
export async function createSubscription(context: IHookFunctions): Promise<void> {
	const webhookUrl = requireHttpsWebhookUrl(context);
	const eventTypes = requireEventTypes(context);
	const staticData = context.getWorkflowStaticData('node');
	const client = new ServiceClient(context);
	const production = registersProductionUrl(context);
	await endStoredSubscription(context, client, staticData);
	if (production) await removeLeftovers(context, client, webhookUrl, { otherUrlToo: true });

	const credentials = await client.credentials();
	const deliveryKey = generateDeliveryKey(keyMakerOf(context));
	const options = context.getNodeParameter('options', {}) as IDataObject;
	const request: SubscriptionRequest = {
		notificationUrl: withDeliveryKey(webhookUrl, deliveryKey),
		eventTypes,
		description:
			typeof options.description === 'string' && options.description.trim() !== ''
				? options.description.trim()
				: null,
	};
	const created = await client
		.requestFull({ method: 'POST', path: paths.subscriptions, body: { ...request } })
		.then(
			(response) => ({
				id: readCreatedSubscriptionId(response.body),
				madeAt: readHttpDate(readHeader(response.headers, SERVICE_TIME_HEADER)),
				failure: undefined,
			}),
			(error: unknown) => ({ id: undefined, madeAt: undefined, failure: error }),
		);
	const adopted =
		created.id === undefined
			? await settleUnconfirmedCreate(context, client, deliveryKey, created.failure)
			: undefined;
	const subscriptionId = created.id ?? adopted?.id ?? '';
	const madeAt = created.id !== undefined ? created.madeAt : readServiceTime(adopted?.createdAt);
	const keyExpiresOn = String(credentials.keyExpiresOn ?? '').trim();
	storeSubscription(staticData, {
		subscriptionId,
		deliveryKeyHash: hashDeliveryKey(deliveryKey),
		workflowId: context.getWorkflow().id,
		clientId: String(credentials.clientId ?? '').trim(),
		baseUrl: baseUrlOf(credentials),
		createdAt: toServiceTimestamp(new Date(madeAt ?? Date.now())),
		keyExpiresOn: keyExpiresOn === '' ? undefined : keyExpiresOn,
		registeredFor: production ? 'production' : 'test',
	});
	if (production && awaitsReplacement(staticData)) noteReplacedAt(context, staticData, madeAt);
}

/**
 * The replaced key's subscriptions learn when their replacement was made, by the service's clock
 * (the create answer's Date header, or the adopted subscription's createdAt): from then on they
 * are let in only for the events the new one may have missed, for a day. Without the service's
 * time every delivery of theirs is let in for that day: Ignore Repeated Deliveries then keeps one
 * of each event. n8n's clock is never put in the service's place.
 */
function noteReplacedAt(context: IHookFunctions, staticData: IDataObject, madeAt?: number) {
	const endsBy = toServiceTimestamp(new Date(Date.now() + DELIVERY_RETRIES_END_WITHIN_MS));
	const replacedAt = madeAt === undefined ? undefined : toServiceTimestamp(new Date(madeAt));
	noteReplacement(staticData, { replacedAt, endsBy });
	if (replacedAt === undefined) {
		context.logger.warn(
			`Invoicing & Assets Trigger: the service did not say when it made the new subscription (its answer had no Date header), so until ${endsBy} the subscription of the replaced API key may start this workflow for events the new one delivers too. Keep Ignore Repeated Deliveries on (the default): it starts each event once`,
			logContext(context),
		);
	}
}

/**
 * delete: removes the stored subscription (already gone counts as removed) and forgets it; one
 * another key made may be left to end with its key (ownership.ts). After the production
 * subscription, whatever this trigger left behind at that URL goes too.
 */
export async function deleteSubscription(context: IHookFunctions): Promise<void> {
	const staticData = context.getWorkflowStaticData('node');
	const client = new ServiceClient(context);
	const stored = readStoredSubscription(staticData);
	await endStoredSubscription(context, client, staticData);
	const webhookUrl = context.getNodeWebhookUrl(WEBHOOK_NAME);
	if (stored?.registeredFor === 'production' && webhookUrl) {
		await removeLeftovers(context, client, webhookUrl, { otherUrlToo: true });
	}
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
