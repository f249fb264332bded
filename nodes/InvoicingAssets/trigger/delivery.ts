import type { IDataObject, IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';

import { selectedEventTypes } from '../shared/events';
import {
	DELIVERY_KEY_PARAMETER,
	NEW_SUBSCRIPTION_RECEIVES_EVENTS_WITHIN_MS,
} from '../transport/contract';
import { isServiceEvent, readServiceTime } from '../transport/responses';
import { CREDENTIAL_TYPE } from '../transport/tokenRenewal';
import { deliveryKeyMatches } from './deliveryKey';
import { forgetUnlessAcknowledged, isFirstDelivery } from './recentEvents';
import {
	logLine,
	ownershipOf,
	readRetiringSubscriptions,
	readStoredSubscription,
	type RetiringSubscription,
	type StoredSubscription,
} from './state';

/** The answer to every delivery let in or passed over, instead of n8n's default text. */
const ACKNOWLEDGED: IWebhookResponseData = { webhookResponse: { received: true } };

/**
 * webhook(): lets in only deliveries that carry the key of this trigger's subscription, or of a
 * retiring one (a replaced API key's, state.ts), and starts the workflow once per new event of a
 * selected type. Rejections are answered here and start nothing. A retiring subscription's copy
 * of an event that certainly reached its replacement too is acknowledged and starts nothing; any
 * other is let in, repeated rather than lost (docs/api-key-replacement.md, step 3).
 */
export async function receiveDelivery(this: IWebhookFunctions): Promise<IWebhookResponseData> {
	const staticData = this.getWorkflowStaticData('node');
	const stored = readStoredSubscription(staticData);
	const presented = (this.getQueryData() as IDataObject)[DELIVERY_KEY_PARAMETER];
	// One trigger and URL: the same event may come through two subscriptions.
	const trigger = [this.getWorkflow().id, this.getNode().id, this.getMode()].join(' ');
	let retiring: RetiringSubscription | undefined;
	if (stored && deliveryKeyMatches(presented, stored.deliveryKeyHash)) {
		await warnIfMadeWithAnotherKey(this, trigger, stored);
	} else {
		retiring = readRetiringSubscriptions(staticData).find((entry) =>
			deliveryKeyMatches(presented, entry.deliveryKeyHash),
		);
		if (!retiring) {
			return reject(this, 401, 'unauthorized', 'The delivery key is missing or not valid.');
		}
	}

	const body = readJsonBody(this);
	if (body === undefined) return reject(this, 400, 'invalid_body', 'The body is not JSON.');
	if (!isServiceEvent(body)) {
		return reject(this, 400, 'invalid_event', 'The body is not an event of the Data Service.');
	}

	// An unknown time (NaN) is never later than another.
	const occurredAt = readServiceTime(body.occurredAt) ?? Number.NaN;
	const replacedAt = readServiceTime(retiring?.replacedAt) ?? Number.NaN;
	if (occurredAt - replacedAt > NEW_SUBSCRIPTION_RECEIVES_EVENTS_WITHIN_MS) return ACKNOWLEDGED;
	// Nothing selected (undefined) starts nothing; null is All Events.
	const wanted = selectedEventTypes(this.getNodeParameter('events', []));
	if (wanted === undefined || (wanted !== null && !wanted.includes(body.eventType))) {
		return ACKNOWLEDGED;
	}
	if (this.getNodeParameter('options.ignoreRepeatedDeliveries', true) !== false) {
		if (!isFirstDelivery(trigger, body.eventId)) return ACKNOWLEDGED;
		forgetUnlessAcknowledged(this.getResponseObject(), trigger, body.eventId);
	}
	// The event as the workflow's item: the delivered JSON, nothing from the URL.
	const item = { ...body } as unknown as IDataObject;
	return { ...ACKNOWLEDGED, workflowData: [this.helpers.returnJsonArray(item)] };
}

/** How often at most a trigger's credential is read on delivery: rarely, to keep deliveries fast. */
const KEY_CHECK_INTERVAL_MS = 5 * 60_000;

/** When the credential was last read, per trigger and subscription (a new one is read at once). */
const lastKeyChecks = new Map<string, number>();

/**
 * Logs a warning when the subscription that delivers to this trigger was made with another API
 * key or Base URL than the credential holds now: a published workflow left out of the README's
 * step 3 (unpublish and publish) would stop without a word once the old key is deleted. At most
 * one credential read per trigger every KEY_CHECK_INTERVAL_MS; a read that fails says nothing.
 */
async function warnIfMadeWithAnotherKey(
	context: IWebhookFunctions,
	trigger: string,
	stored: StoredSubscription,
): Promise<void> {
	const now = Date.now();
	const checked = `${trigger} ${stored.subscriptionId}`;
	const last = lastKeyChecks.get(checked);
	if (last !== undefined && now - last < KEY_CHECK_INTERVAL_MS) return;
	lastKeyChecks.set(checked, now);
	const credentials = await context.getCredentials(CREDENTIAL_TYPE).catch(() => undefined);
	if (!credentials) return;
	const ownership = ownershipOf(stored, context.getWorkflow().id, credentials);
	if (ownership.owner !== 'another key') return;
	logLine(
		context,
		'warn',
		`subscription ${stored.subscriptionId} was created with ${ownership.madeWith}. Unpublish this workflow and publish it again before that key is deleted`,
	);
}

/** Answers the request directly; n8n then sends nothing else and starts no execution. */
function reject(
	context: IWebhookFunctions,
	status: number,
	error: string,
	message: string,
): IWebhookResponseData {
	context.getResponseObject().status(status).json({ error, message });
	return { noWebhookResponse: true };
}

/**
 * The body as JSON, whatever the Content-Type: read from the raw body n8n keeps (a Buffer on every
 * webhook request of n8n 1.x and 2.x), a BOM ignored; undefined when it is not JSON.
 */
function readJsonBody(context: IWebhookFunctions): unknown {
	const raw: unknown = context.getRequestObject().rawBody;
	if (!Buffer.isBuffer(raw)) return undefined;
	try {
		return JSON.parse(raw.toString('utf8').replace(/^\uFEFF/, '')) as unknown;
	} catch {
		return undefined;
	}
}
