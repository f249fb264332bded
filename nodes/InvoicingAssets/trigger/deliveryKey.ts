import { createHash, randomBytes, timingSafeEqual } from 'crypto';

import type { Subscription } from '../transport/contract';
import { readDeliveryKey } from '../transport/notificationUrl';

/** A delivery key's nonce has 256 bits of randomness. */
export const DELIVERY_KEY_BYTES = 32;

/** Bytes of the SHA-256 kept as the key's tag: 128 bits, plenty to tell a made-up one apart. */
export const ORIGIN_TAG_BYTES = 16;

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Separates a delivery key's nonce from its tag of origin; base64url never contains it. */
const TAG_SEPARATOR = '.';

/** Names what the tag is for, so that no digest made for another purpose ever equals one. */
const TAG_LABEL = 'invoicing-assets trigger delivery key';

/** Which trigger makes a delivery key: its workflow and its webhook ID. */
export interface KeyMaker {
	workflowId: string;
	webhookId: string;
}

function tagOf(maker: KeyMaker, nonce: string): Buffer {
	return createHash('sha256')
		.update(JSON.stringify([TAG_LABEL, maker.workflowId, maker.webhookId, nonce]))
		.digest()
		.subarray(0, ORIGIN_TAG_BYTES);
}

/**
 * A fresh delivery key, URL-safe: a random nonce, a dot, and a tag of origin, the truncated
 * SHA-256 of the nonce and the trigger's identity (both base64url). The nonce makes the key
 * unguessable. The tag holds no secret, so it leaks nothing and survives a change of the client
 * secret; it tells a subscription this trigger made from one a user made with Subscription →
 * Create (see `madeBy`), which is all it is for: only a holder of the API key can make either.
 */
export function generateDeliveryKey(maker: KeyMaker): string {
	const nonce = randomBytes(DELIVERY_KEY_BYTES).toString('base64url');
	return `${nonce}${TAG_SEPARATOR}${tagOf(maker, nonce).toString('base64url')}`;
}

/**
 * Whether `deliveryKey` carries `maker`'s tag. Keys of earlier versions of the package (an HMAC
 * under the client secret, 32 bytes) never do: what cannot be proven is never taken for ours.
 */
export function madeBy(deliveryKey: string | undefined, maker: KeyMaker): boolean {
	const [nonce, tag, ...rest] = (deliveryKey ?? '').split(TAG_SEPARATOR);
	if (!nonce || !tag || rest.length > 0) return false;
	const expected = tagOf(maker, nonce);
	const presented = Buffer.from(tag, 'base64url');
	return presented.length === expected.length && timingSafeEqual(presented, expected);
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
