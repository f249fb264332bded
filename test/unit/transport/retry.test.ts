import {
	DEFAULT_RETRY_POLICY,
	isRetryable,
	nextRetryDelayMs,
	type RetryPolicy,
} from '../../../nodes/InvoicingAssets/transport/retry';
import type { HttpFailure } from '../../../nodes/InvoicingAssets/transport/errors';

const failure = (
	status?: number,
	headers: Record<string, unknown> = {},
	code?: string,
): HttpFailure => ({
	status,
	headers,
	code,
	message: 'failed',
});

describe('nextRetryDelayMs', () => {
	test('waits the seconds of Retry-After, whatever the header’s case', () => {
		expect(nextRetryDelayMs(failure(429, { 'Retry-After': '2' }), 'GET', 1, 0)).toBe(2000);
		expect(nextRetryDelayMs(failure(503, { 'retry-after': '0.5' }), 'GET', 1, 0)).toBe(500);
		expect(nextRetryDelayMs(failure(429, { 'retry-after': ['3'] }), 'GET', 1, 0)).toBe(3000);
	});

	test('waits until the HTTP date of Retry-After', () => {
		const at = new Date(Date.now() + 5000).toUTCString();
		const delay = nextRetryDelayMs(failure(429, { 'retry-after': at }), 'GET', 1, 0);
		// HTTP dates have whole seconds, so the wait is between 4 and 5 seconds.
		expect(delay).toBeGreaterThan(3900);
		expect(delay).toBeLessThanOrEqual(5000);
	});

	test('a Retry-After date in the past means retry now', () => {
		const at = new Date(Date.now() - 60_000).toUTCString();
		expect(nextRetryDelayMs(failure(503, { 'retry-after': at }), 'GET', 1, 0)).toBe(0);
	});

	test('without Retry-After it backs off exponentially with jitter, capped', () => {
		for (let attempt = 1; attempt <= 4; attempt++) {
			const full = Math.min(
				DEFAULT_RETRY_POLICY.maxDelayMs,
				DEFAULT_RETRY_POLICY.baseDelayMs * 2 ** (attempt - 1),
			);
			for (let sample = 0; sample < 20; sample++) {
				const delay = nextRetryDelayMs(failure(500), 'GET', attempt, 0) as number;
				expect(delay).toBeGreaterThanOrEqual(full / 2);
				expect(delay).toBeLessThanOrEqual(full);
			}
		}
	});

	test('gives up after the last attempt', () => {
		const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, maxAttempts: 3 };
		// Attempt 2 of 3 still waits: the second backoff step, with its jitter (half to all of it).
		const second = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2);
		const delay = nextRetryDelayMs(failure(429), 'GET', 2, 0, policy);
		expect(typeof delay).toBe('number');
		expect(delay).toBeGreaterThanOrEqual(second / 2);
		expect(delay).toBeLessThanOrEqual(second);
		expect(nextRetryDelayMs(failure(429), 'GET', 3, 0, policy)).toBeUndefined();
	});

	test('gives up rather than wait past the total time budget', () => {
		const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, maxTotalMs: 10_000 };
		expect(nextRetryDelayMs(failure(429, { 'retry-after': '5' }), 'GET', 1, 4_000, policy)).toBe(
			5000,
		);
		expect(
			nextRetryDelayMs(failure(429, { 'retry-after': '5' }), 'GET', 1, 6_000, policy),
		).toBeUndefined();
		expect(nextRetryDelayMs(failure(429, { 'retry-after': '3600' }), 'GET', 1, 0)).toBeUndefined();
	});
});

describe('isRetryable', () => {
	test('429 (the service did not act) for every method', () => {
		for (const method of ['GET', 'POST', 'DELETE'] as const) {
			expect(isRetryable(failure(429), method)).toBe(true);
		}
	});

	test('503, 500, 502, 504 and network faults only where a repeat is harmless', () => {
		for (const status of [503, 500, 502, 504]) {
			expect(isRetryable(failure(status), 'GET')).toBe(true);
			expect(isRetryable(failure(status), 'DELETE')).toBe(true);
			expect(isRetryable(failure(status), 'POST')).toBe(false);
		}
		expect(isRetryable(failure(undefined, {}, 'ECONNRESET'), 'GET')).toBe(true);
		expect(isRetryable(failure(undefined, {}, 'ECONNRESET'), 'POST')).toBe(false);
	});

	test('client errors and failures without a status or code are final', () => {
		for (const status of [400, 401, 403, 404, 409, 422, 501]) {
			expect(isRetryable(failure(status), 'GET')).toBe(false);
		}
		expect(isRetryable(failure(), 'GET')).toBe(false);
	});
});
