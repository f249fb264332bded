/**
 * The notification URL of a subscription and the delivery key it carries (the query argument
 * DELIVERY_KEY_PARAMETER of contract.ts): add it, read it, take it out, and hide it in a URL
 * that reaches output (a service's text passes redaction.ts).
 */
import { DELIVERY_KEY_PARAMETER } from './contract';
import { REDACTED, redactDeliveryKeys } from './redaction';

export function withDeliveryKey(notificationUrl: string, deliveryKey: string): string {
	const url = new URL(notificationUrl);
	url.searchParams.set(DELIVERY_KEY_PARAMETER, deliveryKey);
	return url.toString();
}

/** The delivery key a notification URL carries: its one non-empty `apiKey` argument, else undefined. */
export function readDeliveryKey(notificationUrl: string): string | undefined {
	if (!URL.canParse(notificationUrl)) return undefined;
	const values = new URL(notificationUrl).searchParams.getAll(DELIVERY_KEY_PARAMETER);
	return values.length === 1 && values[0] !== '' ? values[0] : undefined;
}

/** The notification URL without its delivery key, normalised (to compare addresses); undefined when unreadable. */
export function withoutDeliveryKey(notificationUrl: string): string | undefined {
	if (!URL.canParse(notificationUrl)) return undefined;
	const url = new URL(notificationUrl);
	url.searchParams.delete(DELIVERY_KEY_PARAMETER);
	return url.toString();
}

/** The notification URL with the delivery key's value hidden, for output and logs. */
export function redactDeliveryKey(notificationUrl: string): string {
	try {
		const url = new URL(notificationUrl);
		if (!url.searchParams.has(DELIVERY_KEY_PARAMETER)) return notificationUrl;
		url.searchParams.set(DELIVERY_KEY_PARAMETER, REDACTED);
		return url.toString();
	} catch {
		return redactDeliveryKeys(notificationUrl);
	}
}
