import { createHmac } from 'crypto';

import {
	readDeliveryKey,
	withDeliveryKey,
} from '../../../nodes/InvoicingAssets/transport/notificationUrl';
import {
	DELIVERY_KEY_BYTES,
	deliveryKeyMatches,
	generateDeliveryKey,
	hashDeliveryKey,
	madeBy,
	ORIGIN_TAG_BYTES,
	type KeyMaker,
} from '../../../nodes/InvoicingAssets/trigger/deliveryKey';
import { expectNoSecret } from '../../harness/secrets';

const maker: KeyMaker = { workflowId: 'wf-1', webhookId: 'hook-1' };
const generateDeliveryKeyOf = () => generateDeliveryKey(maker);

describe('delivery keys', () => {
	test('are 32 random bytes and a 16-byte tag, in base64url, different every time', () => {
		const keys = Array.from({ length: 50 }, generateDeliveryKeyOf);
		for (const key of keys) {
			expect(/^[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{22}$/.test(key)).toBe(true);
			expect(Buffer.from(key.split('.')[0], 'base64url').length).toBe(DELIVERY_KEY_BYTES);
			expect(Buffer.from(key.split('.')[1], 'base64url').length).toBe(ORIGIN_TAG_BYTES);
		}
		expect(new Set(keys).size).toBe(keys.length);
		expect(new Set(keys.map((key) => key.split('.')[1])).size).toBe(keys.length);
	});

	test('tell who made them: the same trigger, and nobody else', () => {
		const key = generateDeliveryKey(maker);
		expect(madeBy(key, maker)).toBe(true);
		expect(madeBy(key, { ...maker })).toBe(true);
		for (const other of [
			{ ...maker, workflowId: 'wf-2' },
			{ ...maker, webhookId: 'hook-2' },
		]) {
			expect(madeBy(key, other)).toBe(false);
		}
		const [nonce, proof] = key.split('.');
		for (const forged of [
			undefined,
			'',
			nonce,
			`${nonce}.`,
			`.${proof}`,
			`${nonce}.${proof}.x`,
			`${generateDeliveryKey(maker).split('.')[0]}.${proof}`,
			`${nonce}.${proof.slice(0, -2)}`,
			'a-key-chosen-by-a-user',
		]) {
			expect(madeBy(forged, maker)).toBe(false);
		}
	});

	test('are no offline oracle for the client secret: no guess of it is confirmed by a notification URL', () => {
		// What the first pass did: the tag was an HMAC under the client secret, so anyone holding a
		// URL and the workflow ID (in n8n's log lines) could test guesses of the secret offline.
		const secret = 'Invoicing2026!';
		const url = withDeliveryKey(
			'https://n8n.example.com/webhook/hook-1/webhook',
			generateDeliveryKey(maker),
		);
		const [nonce, tag] = (readDeliveryKey(url) ?? '').split('.');
		const confirmed = ['password', 'Invoicing2025!', secret].filter((guess) => {
			const proof = createHmac('sha256', guess)
				.update(['invoicing-assets trigger', maker.workflowId, maker.webhookId, nonce].join('\n'))
				.digest();
			return proof.subarray(0, Buffer.from(tag, 'base64url').length).toString('base64url') === tag;
		});
		expect(confirmed).toEqual([]);
	});

	test('are stored as their SHA-256 in hex', () => {
		expect(hashDeliveryKey('abc')).toBe(
			'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
		);
		const key = generateDeliveryKeyOf();
		expect(hashDeliveryKey(key)).toMatch(/^[0-9a-f]{64}$/);
		expectNoSecret(hashDeliveryKey(key), [key], 'the hash');
	});
});

describe('deliveryKeyMatches', () => {
	const key = generateDeliveryKeyOf();
	const stored = hashDeliveryKey(key);

	test('accepts the key', () => {
		expect(deliveryKeyMatches(key, stored)).toBe(true);
	});

	test.each([
		['another key', generateDeliveryKeyOf()],
		['one character changed', `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`],
		['a prefix', key.slice(0, -1)],
		['an extension', `${key}A`],
		['surrounding spaces', ` ${key} `],
		['the stored hash itself', stored],
		['an empty string', ''],
		['undefined', undefined],
		['null', null],
		['a number', 42],
		['an array holding the key', [key]],
		['an array holding the key twice', [key, key]],
		['an object holding the key', { x: key }],
	])('refuses %s', (_name, presented) => {
		expect(deliveryKeyMatches(presented, stored)).toBe(false);
	});

	test.each([
		['nothing stored', undefined],
		['an empty hash', ''],
		['the key instead of its hash', key],
		['a hash in upper case', stored.toUpperCase()],
		['a truncated hash', stored.slice(0, 63)],
	])('refuses every key when there is %s', (_name, storedHash) => {
		expect(deliveryKeyMatches(key, storedHash)).toBe(false);
		expect(deliveryKeyMatches('', storedHash)).toBe(false);
	});
});
