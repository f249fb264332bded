/**
 * What the retry loop decides, where no service can show it as exactly: which failures are worth
 * another try, the capped backoff, and how long it waits (Retry-After, the deadline), on a
 * simulated clock. That the answers reach it through n8n is proven through the node over HTTPS
 * (test/integration/action/service-errors.test.ts, credential.test.ts), without timing.
 */
import type { IN8nHttpFullResponse } from 'n8n-workflow';

import {
	BASE_DELAY_MS,
	isRetryable,
	MAX_ATTEMPTS,
	MAX_DELAY_MS,
	nextRetryDelayMs,
	sendWithRetries,
	type RetryClock,
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

/** A clock for the retry loop that only moves when it waits, recording each wait. */
function simulatedClock(startMs: number) {
	let nowMs = startMs;
	const waits: number[] = [];
	const clock: RetryClock = {
		now: () => nowMs,
		wait: async (ms) => {
			waits.push(ms);
			nowMs += ms;
			return true;
		},
	};
	return { clock, waits };
}

/** `send` answering each attempt with the next of `answers`. */
function answering(answers: Array<Partial<IN8nHttpFullResponse>>) {
	let sent = 0;
	const send = async (): Promise<IN8nHttpFullResponse> => ({
		statusCode: 200,
		headers: {},
		body: null,
		...answers[Math.min(sent++, answers.length - 1)],
	});
	return { send, sent: () => sent };
}

describe('sendWithRetries on a simulated clock', () => {
	// 2026-06-15T08:00:00.318Z: not on a whole second, as n8n's clock rarely is.
	const START = Date.UTC(2026, 5, 15, 8, 0, 0, 318);

	test('a Retry-After given as an HTTP date is waited for by the clock the attempts run on', async () => {
		const { clock, waits } = simulatedClock(START);
		const retryAt = Date.UTC(2026, 5, 15, 8, 0, 3);
		const { send, sent } = answering([
			{ statusCode: 429, headers: { 'retry-after': new Date(retryAt).toUTCString() } },
			{ statusCode: 200 },
		]);
		const outcome = await sendWithRetries(send, { method: 'GET', clock });
		expect(outcome.failure).toBeUndefined();
		expect(waits).toEqual([retryAt - START]);
		expect([sent(), outcome.attempts, outcome.elapsedMs]).toEqual([2, 2, retryAt - START]);
	});

	test('a Retry-After in seconds is waited for exactly, the token request’s too (POST, harmless to repeat)', async () => {
		const { clock, waits } = simulatedClock(START);
		const { send } = answering([
			{ statusCode: 503, headers: { 'retry-after': '1' } },
			{ statusCode: 429, headers: { 'retry-after': '2.5' } },
			{ statusCode: 200 },
		]);
		const outcome = await sendWithRetries(send, { method: 'POST', harmlessToRepeat: true, clock });
		expect(outcome.failure).toBeUndefined();
		expect(waits).toEqual([1000, 2500]);
		expect(outcome.elapsedMs).toBe(3500);
	});

	test('no retry waits past the deadline: a Retry-After beyond it ends the attempts at once, with the answer', async () => {
		const { clock, waits } = simulatedClock(START);
		const { send, sent } = answering([{ statusCode: 429, headers: { 'retry-after': '45' } }]);
		const outcome = await sendWithRetries(send, { method: 'GET', deadline: START + 3000, clock });
		expect(outcome.failure?.status).toBe(429);
		expect(outcome.response?.statusCode).toBe(429);
		expect([waits, sent(), outcome.elapsedMs]).toEqual([[], 1, 0]);
	});
});
