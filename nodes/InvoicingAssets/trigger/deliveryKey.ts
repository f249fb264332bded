import { createHash, createHmac, randomBytes, timingSafeEqual } from 'crypto';

/** A delivery key's nonce has 256 bits of randomness. */
export const DELIVERY_KEY_BYTES = 32;

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Separates a delivery key's nonce from its proof of origin; base64url never contains it. */
const PROOF_SEPARATOR = '.';

/**
 * Who makes a delivery key: the trigger (its workflow and webhook ID) and the secret only its
 * credential holds (the API key's client secret). A key proves that this trigger made it to
 * anyone who holds the same three; nobody else can make one that passes.
 */
export interface KeyMaker {
	secret: string;
	workflowId: string;
	webhookId: string;
}

function proofOf(maker: KeyMaker, nonce: string): Buffer {
	return createHmac('sha256', maker.secret)
		.update(['invoicing-assets trigger', maker.workflowId, maker.webhookId, nonce].join('\n'))
		.digest();
}

/**
 * A fresh delivery key, URL-safe: a random nonce, a dot, and an HMAC-SHA256 of the nonce and the
 * trigger's identity under the client secret (both base64url). The nonce makes it unguessable; the
 * HMAC lets the trigger recognise, later and without having stored anything, a subscription it
 * made itself (see `madeBy`).
 */
export function generateDeliveryKey(maker: KeyMaker): string {
	const nonce = randomBytes(DELIVERY_KEY_BYTES).toString('base64url');
	return `${nonce}${PROOF_SEPARATOR}${proofOf(maker, nonce).toString('base64url')}`;
}

/** Whether `deliveryKey` was made by `maker` (compared in constant time). */
export function madeBy(deliveryKey: string | undefined, maker: KeyMaker): boolean {
	const [nonce, proof, ...rest] = (deliveryKey ?? '').split(PROOF_SEPARATOR);
	if (!nonce || !proof || rest.length > 0) return false;
	const expected = proofOf(maker, nonce);
	const presented = Buffer.from(proof, 'base64url');
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
