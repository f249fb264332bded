/**
 * The memory behind "Ignore Repeated Deliveries": the last event IDs let in, per subscription, in
 * this n8n process. It is deliberately not node static data: n8n 2.41 does not save static data
 * changed in webhook() when the call starts an execution (WorkflowRunner wraps the same object
 * again and resets its "changed" flag before the live-webhook path saves it), and a save from a
 * delivery could overwrite the subscription that a concurrent publish has just stored.
 */

/** Event IDs remembered per subscription. */
export const SEEN_EVENT_LIMIT = 1000;

/** Subscriptions remembered (the least recently used is forgotten first). */
export const SUBSCRIPTION_LIMIT = 100;

const seenBySubscription = new Map<string, Set<string>>();

/** Records a delivered event; false when this subscription already delivered it. */
export function isFirstDelivery(subscriptionId: string, eventId: string): boolean {
	const seen = seenBySubscription.get(subscriptionId) ?? new Set<string>();
	seenBySubscription.delete(subscriptionId);
	seenBySubscription.set(subscriptionId, seen);
	dropOldest(seenBySubscription, SUBSCRIPTION_LIMIT);
	if (seen.has(eventId)) return false;
	seen.add(eventId);
	dropOldest(seen, SEEN_EVENT_LIMIT);
	return true;
}

/** Lets an event in again, e.g. when its delivery was not acknowledged and the service will retry it. */
export function forgetDelivery(subscriptionId: string, eventId: string) {
	seenBySubscription.get(subscriptionId)?.delete(eventId);
}

interface ResponseEvents {
	statusCode: number;
	writableFinished: boolean;
	once(event: 'close', listener: () => void): unknown;
}

/**
 * The service retries any delivery it did not see answered 2xx. When n8n fails to start the
 * execution after webhook() let an event in (and answers 5xx), or the connection drops first,
 * the event is forgotten so that the retry runs it: a delivery is repeated rather than lost.
 */
export function forgetUnlessAcknowledged(
	response: ResponseEvents,
	subscriptionId: string,
	eventId: string,
) {
	response.once('close', () => {
		const acknowledged =
			response.writableFinished && response.statusCode >= 200 && response.statusCode < 300;
		if (!acknowledged) forgetDelivery(subscriptionId, eventId);
	});
}

function dropOldest(entries: Set<string> | Map<string, unknown>, limit: number) {
	for (const key of entries.keys()) {
		if (entries.size <= limit) return;
		entries.delete(key);
	}
}
