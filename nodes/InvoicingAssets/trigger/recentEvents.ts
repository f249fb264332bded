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
 * Event IDs remembered in all, across every trigger of this n8n process (the oldest is forgotten
 * first): about 9 MiB of heap when full (measured with UUID event IDs). 100 triggers keep their last 1,000 each; with more triggers,
 * each still keeps its most recent events, never losing them all at once.
 */
export const TOTAL_EVENT_LIMIT = 100_000;

interface TriggerMemory {
	trigger: string;
	/** Its event IDs, oldest first. */
	events: Set<string>;
}

const byTrigger = new Map<string, TriggerMemory>();

/** Every remembered event of the process in a ring, oldest at `next` once it is full. */
const ringMemory: Array<TriggerMemory | undefined> = [];
const ringEvent: string[] = [];
let next = 0;

/** Records a delivered event; false when this trigger already let it in. */
export function isFirstDelivery(trigger: string, eventId: string): boolean {
	let memory = byTrigger.get(trigger);
	if (memory?.events.has(eventId)) return false;
	if (!memory) {
		memory = { trigger, events: new Set<string>() };
		byTrigger.set(trigger, memory);
	}
	const oldest = ringMemory[next];
	if (oldest) forget(oldest, ringEvent[next]);
	ringMemory[next] = memory;
	ringEvent[next] = eventId;
	next = (next + 1) % TOTAL_EVENT_LIMIT;
	memory.events.add(eventId);
	if (memory.events.size > SEEN_EVENT_LIMIT) {
		forget(memory, memory.events.values().next().value as string);
	}
	return true;
}

/** Lets an event in again, e.g. when its delivery was not acknowledged and the service will retry it. */
function forgetDelivery(trigger: string, eventId: string) {
	const memory = byTrigger.get(trigger);
	if (memory) forget(memory, eventId);
}

function forget(memory: TriggerMemory, eventId: string) {
	if (!memory.events.delete(eventId)) return;
	if (memory.events.size === 0 && byTrigger.get(memory.trigger) === memory) {
		byTrigger.delete(memory.trigger);
	}
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
	trigger: string,
	eventId: string,
) {
	response.once('close', () => {
		const acknowledged =
			response.writableFinished && response.statusCode >= 200 && response.statusCode < 300;
		if (!acknowledged) forgetDelivery(trigger, eventId);
	});
}
