import type { IHttpRequestMethods, IN8nHttpFullResponse } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { RETRYABLE_STATUSES, TRANSIENT_SERVER_STATUSES, UNPROCESSED_STATUSES } from './contract';
import { readHeader, readRetryAfterMs } from './responses';
import { failureOfResponse, readFailure, type HttpFailure } from './errors';

export const MAX_ATTEMPTS = 5;

/** No retry starts once this much time has passed since the first attempt. */
export const MAX_RETRY_WAIT_MS = 60_000;

/** The backoff without Retry-After: doubles from BASE_DELAY_MS, at most MAX_DELAY_MS. */
export const BASE_DELAY_MS = 250;
export const MAX_DELAY_MS = 8_000;

/** How long one attempt may take without a deadline. */
export const REQUEST_TIMEOUT_MS = 30_000;

/** How long an attempt may run past its request's deadline before it is given up. */
export const DEADLINE_GRACE_MS = 1500;

const IDEMPOTENT_METHODS: IHttpRequestMethods[] = ['GET', 'HEAD', 'PUT', 'DELETE'];

/**
 * A request the service did not act on (429) is always retried. Other "come back later" answers,
 * transient faults and network errors are retried only where a repeat is harmless: a create
 * sent twice could make two records.
 */
export function isRetryable(
	failure: HttpFailure,
	method: IHttpRequestMethods,
	harmlessToRepeat = IDEMPOTENT_METHODS.includes(method),
): boolean {
	if (failure.status !== undefined) {
		if (UNPROCESSED_STATUSES.includes(failure.status)) return true;
		return (
			harmlessToRepeat &&
			(RETRYABLE_STATUSES.includes(failure.status) ||
				TRANSIENT_SERVER_STATUSES.includes(failure.status))
		);
	}
	return failure.code !== undefined && harmlessToRepeat;
}

/** How long to wait before the next attempt, or undefined to give up; `now` reads a Retry-After date. */
export function nextRetryDelayMs(
	failure: HttpFailure,
	method: IHttpRequestMethods,
	attempt: number,
	elapsedMs: number,
	harmlessToRepeat?: boolean,
	now = Date.now(),
): number | undefined {
	if (attempt >= MAX_ATTEMPTS || !isRetryable(failure, method, harmlessToRepeat)) {
		return undefined;
	}
	const backoff = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** (attempt - 1));
	const asked = readRetryAfterMs(readHeader(failure.headers, 'retry-after'), now);
	const delay = asked ?? backoff * (0.5 + Math.random() / 2);
	return elapsedMs + delay > MAX_RETRY_WAIT_MS ? undefined : delay;
}

/** What the attempts at one request came to: a success, or the last attempt's failure (and answer, if any). */
export type Attempts = (
	| { response: IN8nHttpFullResponse; failure?: undefined }
	| { response?: IN8nHttpFullResponse; failure: HttpFailure }
) & { attempts: number; elapsedMs: number };

/** What ends a request's attempts besides its policy. */
export interface RetryBounds {
	/** Epoch ms (e.g. a poll's budget): no retry waits past it, and an attempt ends DEADLINE_GRACE_MS after it. */
	deadline?: number;
	/** The execution's cancel signal: once it aborts, no retry waits. */
	signal?: AbortSignal;
	/** The time the attempts are timed and waited by: the real one, unless a test simulates it. */
	clock?: RetryClock;
}

export interface RetryClock {
	now(): number;
	/** Waits `ms`; false when the wait was cancelled. */
	wait(ms: number, signal?: AbortSignal): Promise<boolean>;
}

const REAL_CLOCK: RetryClock = { now: () => Date.now(), wait: waitUnlessCancelled };

export interface RetryOptions extends RetryBounds {
	method: IHttpRequestMethods;
	/** Whether sending the request twice is harmless; by default, whether its method is idempotent. */
	harmlessToRepeat?: boolean;
}

/**
 * Waits `ms`; false when `signal` (the execution's cancel signal, when n8n gives one) aborted
 * before or meanwhile: the wait then ends at once, and so do the attempts.
 */
export async function waitUnlessCancelled(ms: number, signal?: AbortSignal): Promise<boolean> {
	if (signal?.aborted) return false;
	let onAbort = () => {};
	const aborted = new Promise<void>((resolve) => (onAbort = resolve));
	signal?.addEventListener('abort', onAbort, { once: true });
	await Promise.race([sleep(ms), aborted]);
	signal?.removeEventListener('abort', onAbort);
	return signal?.aborted !== true;
}

/**
 * The time an attempt may take: REQUEST_TIMEOUT_MS, within the deadline, but at least
 * DEADLINE_GRACE_MS (an attempt past the deadline is one the caller still wants).
 */
function timeoutBefore(deadline: number | undefined, clock: RetryClock): number {
	if (deadline === undefined) return REQUEST_TIMEOUT_MS;
	const left = deadline + DEADLINE_GRACE_MS - clock.now();
	return Math.max(DEADLINE_GRACE_MS, Math.min(REQUEST_TIMEOUT_MS, left));
}

/**
 * The one retry loop, of the service's requests and of the token request: `send` (given the time
 * its attempt may take) is tried until it answers below 300 or its failure is not worth another
 * try (nextRetryDelayMs, the deadline, the cancel signal). `send` answers every status itself
 * (ignoreHttpStatusErrors); what it throws is read as a failure too.
 */
export async function sendWithRetries(
	send: (timeoutMs: number) => Promise<IN8nHttpFullResponse>,
	{ method, harmlessToRepeat, deadline, signal, clock = REAL_CLOCK }: RetryOptions,
): Promise<Attempts> {
	const started = clock.now();
	for (let attempt = 1; ; attempt++) {
		let response: IN8nHttpFullResponse | undefined;
		let failure: HttpFailure;
		try {
			response = await send(timeoutBefore(deadline, clock));
			if (response.statusCode < 300) {
				return { response, attempts: attempt, elapsedMs: clock.now() - started };
			}
			failure = failureOfResponse(response);
		} catch (error) {
			failure = readFailure(error);
		}
		const elapsedMs = clock.now() - started;
		const outcome = { response, failure, attempts: attempt, elapsedMs };
		const delay = nextRetryDelayMs(
			failure,
			method,
			attempt,
			elapsedMs,
			harmlessToRepeat,
			clock.now(),
		);
		if (delay === undefined) return outcome;
		if (deadline !== undefined && clock.now() + delay >= deadline) return outcome;
		if (!(await clock.wait(delay, signal))) return outcome;
	}
}
