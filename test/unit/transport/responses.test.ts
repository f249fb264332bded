import {
	readAccessToken,
	readCreatedSubscriptionId,
	readPage,
	readRetryAfterMs,
	readServiceError,
} from '../../../nodes/InvoicingAssets/transport/responses';

describe('pages', () => {
	test('readPage accepts the envelope as object or JSON text, and nothing else', () => {
		const envelope = { items: [{ a: 1 }], page: 1, pageSize: 1, totalItems: 5 };
		expect(readPage(envelope)).toEqual(envelope);
		expect(readPage(JSON.stringify(envelope))).toEqual(envelope);
		expect(readPage([{ a: 1 }])).toBeUndefined();
		expect(readPage({ data: [] })).toBeUndefined();
		expect(readPage('not json')).toBeUndefined();
		expect(readPage(null)).toBeUndefined();
	});
});

describe('tokens and subscriptions', () => {
	test('readAccessToken reads accessToken, tolerates access_token, refuses empties', () => {
		expect(readAccessToken({ accessToken: 'a' })).toBe('a');
		expect(readAccessToken('{"access_token":"b"}')).toBe('b');
		expect(readAccessToken({ accessToken: '' })).toBeUndefined();
		expect(readAccessToken({ token: 'c' })).toBeUndefined();
		expect(readAccessToken('plain text')).toBeUndefined();
	});

	test('readCreatedSubscriptionId reads a JSON string, bare text or { id }', () => {
		const id = '3f2c9a7e-1b4d-4c8e-9f0a-2d6b8e1c5a47';
		expect(readCreatedSubscriptionId(`"${id}"`)).toBe(id);
		expect(readCreatedSubscriptionId(` ${id}\n`)).toBe(id);
		expect(readCreatedSubscriptionId({ id })).toBe(id);
		expect(readCreatedSubscriptionId(`{"id":"${id}"}`)).toBe(id);
		expect(readCreatedSubscriptionId('')).toBeUndefined();
		expect(readCreatedSubscriptionId({})).toBeUndefined();
		expect(readCreatedSubscriptionId(null)).toBeUndefined();
	});
});

describe('errors and limits', () => {
	test('readServiceError reads the service’s, OAuth and problem+json shapes', () => {
		expect(readServiceError({ code: 'not_found', message: 'Gone', details: null })).toEqual({
			code: 'not_found',
			message: 'Gone',
		});
		expect(readServiceError('{"error":"invalid_client","error_description":"No"}')).toEqual({
			code: 'invalid_client',
			message: 'No',
		});
		expect(readServiceError({ title: 'Bad Request', detail: 'page' })).toEqual({
			code: 'Bad Request',
			message: 'page',
		});
		expect(readServiceError('<html>')).toEqual({ code: null, message: null });
	});

	test('readRetryAfterMs reads seconds and HTTP dates', () => {
		const now = Date.parse('2026-01-01T00:00:00Z');
		expect(readRetryAfterMs('2', now)).toBe(2000);
		expect(readRetryAfterMs('1.5', now)).toBe(1500);
		expect(readRetryAfterMs('Thu, 01 Jan 2026 00:00:09 GMT', now)).toBe(9000);
		expect(readRetryAfterMs('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0);
		expect(readRetryAfterMs('soon', now)).toBeUndefined();
		expect(readRetryAfterMs(undefined, now)).toBeUndefined();
	});
});
