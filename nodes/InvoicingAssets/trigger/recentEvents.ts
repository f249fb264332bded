import type { IWebhookFunctions } from 'n8n-workflow';

/**
 * The memory behind "Ignore Repeated Deliveries": the last event IDs let in, per trigger (its
 * workflow, node and URL, production or test), in this n8n process. Per trigger, not per
 * subscription: after an API key was replaced, one event may arrive through the old key's
 * subscription and through the new one, with the same event ID.
 *
 * It is deliberately not node static data: n8n 2.41 does not save static data
 * changed in webhook() when the call starts an execution (WorkflowRunner wraps the same object
 * again and resets its "changed" flag before the live-webhook path saves it), and a save from a
 * delivery could overwrite the subscription that a concurrent publish has just stored.
 */

/** Event IDs remembered per trigger (its most recent ones). */
export const SEEN_EVENT_LIMIT = 1000;

/**
 * Triggers remembered per n8n process; beyond, the one delivered to least recently is forgotten.
 * Full, the memory takes about 7.4 MiB of heap (measured with UUID event IDs).
 */
export const TRIGGER_LIMIT = 100;

/** Each trigger's event IDs, oldest first; the triggers, least recently delivered to first. */
const byTrigger = new Map<string, Set<string>>();

/** Records a delivered event; false when this trigger already let it in. */
export function isFirstDelivery(trigger: string, eventId: string): boolean {
	const events = byTrigger.get(trigger) ?? new Set<string>();
	byTrigger.delete(trigger);
	byTrigger.set(trigger, events);
	if (events.has(eventId)) return false;
	events.add(eventId);
	if (events.size > SEEN_EVENT_LIMIT) events.delete(events.values().next().value as string);
	if (byTrigger.size > TRIGGER_LIMIT) byTrigger.delete(byTrigger.keys().next().value as string);
	return true;
}

/**
 * The service retries any delivery it did not see answered 2xx. When n8n fails to start the
 * execution after webhook() let an event in (and answers 5xx), or the connection drops first,
 * the event is forgotten so that the retry runs it: a delivery is repeated rather than lost.
 */
export function forgetUnlessAcknowledged(
	response: ReturnType<IWebhookFunctions['getResponseObject']>,
	trigger: string,
	eventId: string,
) {
	response.once('close', () => {
		const acknowledged =
			response.writableFinished && response.statusCode >= 200 && response.statusCode < 300;
		if (!acknowledged) byTrigger.get(trigger)?.delete(eventId);
	});
}
