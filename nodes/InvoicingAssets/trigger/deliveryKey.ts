import { createHash, randomBytes, timingSafeEqual } from 'crypto';

import type { Subscription } from '../transport/contract';
import { readDeliveryKey } from '../transport/notificationUrl';

/** A delivery key has 256 bits of randomness. */
export const DELIVERY_KEY_BYTES = 32;

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** A fresh, unguessable delivery key, URL-safe (base64url). */
export function generateDeliveryKey(): string {
	return randomBytes(DELIVERY_KEY_BYTES).toString('base64url');
}

/** The SHA-256 of a key, in hex: the only form of the key that is ever stored. */
export function hashDeliveryKey(deliveryKey: string): string {
	return createHash('sha256').update(deliveryKey, 'utf8').digest('hex');
}

/**
 * True when `presented` is one non-empty string whose SHA-256 equals `storedHash`. Digests of
 * equal length are compared in constant time, so neither the key nor its length leaks.
 */
export function deliveryKeyMatches(presented: unknown, storedHash: unknown): boolean {
	if (typeof presented !== 'string' || presented === '') return false;
	if (typeof storedHash !== 'string' || !SHA256_HEX.test(storedHash)) return false;
	const expected = Buffer.from(storedHash, 'hex');
	const actual = createHash('sha256').update(presented, 'utf8').digest();
	return timingSafeEqual(actual, expected);
}

/** Whether a listed subscription's notification URL carries the key of `deliveryKeyHash`. */
export function carriesKeyHash(subscription: Subscription, deliveryKeyHash: string): boolean {
	return deliveryKeyMatches(
		readDeliveryKey(String(subscription.notificationUrl ?? '')),
		deliveryKeyHash,
	);
}
