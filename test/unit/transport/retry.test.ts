/**
 * What the retry loop decides, where no service can show it as exactly: which failures are worth
 * another try, and the capped backoff. Retry-After and the faults themselves are proven through
 * the node over HTTPS: test/integration/action/service-errors.test.ts.
 */
import {
	BASE_DELAY_MS,
	isRetryable,
	MAX_ATTEMPTS,
	MAX_DELAY_MS,
	nextRetryDelayMs,
} from '../../../nodes/InvoicingAssets/transport/retry';
import type { HttpFailure } from '../../../nodes/InvoicingAssets/transport/errors';

const failure = (status?: number, code?: string): HttpFailure => ({ status, code, message: 'x' });

test('without Retry-After the wait doubles from attempt to attempt, with jitter, up to its cap', () => {
	for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
		const full = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** (attempt - 1));
		for (let sample = 0; sample < 20; sample++) {
			const delay = nextRetryDelayMs(failure(500), 'GET', attempt, 0) as number;
			expect(delay).toBeGreaterThanOrEqual(full / 2);
			expect(delay).toBeLessThanOrEqual(full);
		}
	}
	expect(nextRetryDelayMs(failure(500), 'GET', MAX_ATTEMPTS, 0)).toBeUndefined();
});

test('a 429 is retried for every method; 5xx and network errors only where a repeat is harmless', () => {
	for (const method of ['GET', 'POST', 'DELETE'] as const) {
		expect(isRetryable(failure(429), method)).toBe(true);
	}
	for (const retried of [
		failure(500),
		failure(502),
		failure(503),
		failure(504),
		failure(undefined, 'ECONNRESET'),
	]) {
		expect([isRetryable(retried, 'GET'), isRetryable(retried, 'DELETE')]).toEqual([true, true]);
		expect(isRetryable(retried, 'POST')).toBe(false);
		expect(isRetryable(retried, 'POST', true)).toBe(true);
	}
	for (const final of [400, 401, 403, 404, 409, 422, 501].map((status) => failure(status))) {
		expect(isRetryable(final, 'GET')).toBe(false);
	}
	// A refusal explained by its own text (no status, no network code) is final.
	expect(isRetryable(failure(), 'GET')).toBe(false);
});
