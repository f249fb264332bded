import type { IDataObject, IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';

import { selectedEventTypes } from '../shared/events';
import {
	DELIVERY_KEY_PARAMETER,
	surelyDeliveredToSubscriptionMadeAt,
	type ServiceEvent,
} from '../transport/contract';
import { isServiceEvent, readServiceTime } from '../transport/responses';
import { deliveryKeyMatches } from './deliveryKey';
import { warnIfMadeWithAnotherKey } from './keyNotice';
import { forgetUnlessAcknowledged, isFirstDelivery } from './recentEvents';
import {
	readRetiringSubscriptions,
	readStoredSubscription,
	type RetiringSubscription,
} from './state';

/** The body of every 200 answer, instead of n8n's default text. */
export const acknowledgement = () => ({ received: true });

/**
 * webhook(): lets in only deliveries that carry the key of this trigger's subscription, or of a
 * retiring one (a replaced API key's, state.ts), and starts the workflow once per new event of a
 * selected type. Rejections are answered here and start nothing.
 *
 * A retiring subscription's delivery of an event that certainly reached its replacement as well
 * (contract.ts, surelyDeliveredToSubscriptionMadeAt) is acknowledged and starts nothing. Any other
 * is let in, also while the replacement is still being made (n8n 2.x routes the URL before it
 * creates the subscription): a delivery is repeated rather than lost, and Ignore Repeated
 * Deliveries keeps one of the two copies.
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

	const json = readJsonBody(this);
	if (!json.ok) return reject(this, 400, 'invalid_body', 'The body is not JSON.');
	const body = json.value;
	if (!isServiceEvent(body)) {
		return reject(this, 400, 'invalid_event', 'The body is not an event of the Data Service.');
	}

	if (
		retiring?.replacedAt !== undefined &&
		surelyDeliveredToSubscriptionMadeAt(
			readServiceTime(body.occurredAt),
			readServiceTime(retiring.replacedAt) ?? Number.NaN,
		)
	) {
		return { webhookResponse: acknowledgement() };
	}
	// Nothing selected (undefined) starts nothing; null is All Events.
	const wanted = selectedEventTypes(this.getNodeParameter('events', []));
	if (wanted === undefined || (wanted !== null && !wanted.includes(body.eventType))) {
		return { webhookResponse: acknowledgement() };
	}
	const ignoreRepeated = this.getNodeParameter('options.ignoreRepeatedDeliveries', true) !== false;
	if (ignoreRepeated) {
		if (!isFirstDelivery(trigger, body.eventId)) {
			return { webhookResponse: acknowledgement() };
		}
		forgetUnlessAcknowledged(this.getResponseObject(), trigger, body.eventId);
	}
	return {
		webhookResponse: acknowledgement(),
		workflowData: [this.helpers.returnJsonArray(eventJson(body))],
	};
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
 * The body as JSON, whatever the Content-Type: read from the raw body n8n keeps (UTF-8, a BOM
 * ignored), else from the body n8n parsed. `{ ok: false }` when it is not JSON.
 */
function readJsonBody(context: IWebhookFunctions): { ok: true; value: unknown } | { ok: false } {
	const raw: unknown = context.getRequestObject().rawBody;
	const text = Buffer.isBuffer(raw)
		? raw.toString('utf8')
		: typeof raw === 'string'
			? raw
			: undefined;
	if (text === undefined) {
		const parsed: unknown = context.getBodyData();
		return typeof parsed === 'object' && parsed !== null
			? { ok: true, value: parsed }
			: { ok: false };
	}
	try {
		return { ok: true, value: JSON.parse(text.replace(/^\uFEFF/, '')) as unknown };
	} catch {
		return { ok: false };
	}
}

/** The event as the workflow's item: the delivered JSON, nothing from the URL. */
function eventJson(event: ServiceEvent): IDataObject {
	return { ...event } as unknown as IDataObject;
}
