import type { IDataObject, IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';

import { selectedEventTypes } from '../shared/events';
import { DELIVERY_KEY_PARAMETER, type ServiceEvent } from '../transport/contract';
import { isServiceEvent } from '../transport/responses';
import { deliveryKeyMatches } from './deliveryKey';
import { forgetUnlessAcknowledged, isFirstDelivery } from './recentEvents';
import { readStoredSubscription } from './state';

/** The body of every 200 answer, instead of n8n's default text. */
export const acknowledgement = () => ({ received: true });

/**
 * webhook(): lets in only deliveries that carry this subscription's key, and starts the workflow
 * once per new event of a selected type. Rejections are answered here and start nothing.
 */
export async function receiveDelivery(this: IWebhookFunctions): Promise<IWebhookResponseData> {
	const stored = readStoredSubscription(this.getWorkflowStaticData('node'));
	const query = this.getQueryData() as IDataObject;
	if (!stored || !deliveryKeyMatches(query[DELIVERY_KEY_PARAMETER], stored.deliveryKeyHash)) {
		return reject(this, 401, 'unauthorized', 'The delivery key is missing or not valid.');
	}

	const json = readJsonBody(this);
	if (!json.ok) return reject(this, 400, 'invalid_body', 'The body is not JSON.');
	const body = json.value;
	if (!isServiceEvent(body)) {
		return reject(this, 400, 'invalid_event', 'The body is not an event of the Data Service.');
	}

	// Nothing selected (undefined) starts nothing; null is All Events.
	const wanted = selectedEventTypes(this.getNodeParameter('events', []));
	if (wanted === undefined || (wanted !== null && !wanted.includes(body.eventType))) {
		return { webhookResponse: acknowledgement() };
	}
	const ignoreRepeated = this.getNodeParameter('options.ignoreRepeatedDeliveries', true) !== false;
	if (ignoreRepeated) {
		if (!isFirstDelivery(stored.subscriptionId, body.eventId)) {
			return { webhookResponse: acknowledgement() };
		}
		forgetUnlessAcknowledged(this.getResponseObject(), stored.subscriptionId, body.eventId);
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
