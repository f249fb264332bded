import type { IHttpRequestMethods } from 'n8n-workflow';

import { RETRYABLE_STATUSES, TRANSIENT_SERVER_STATUSES, UNPROCESSED_STATUSES } from './contract';
import { readRetryAfterMs } from './responses';
import type { HttpFailure } from './errors';

export interface RetryPolicy {
	maxAttempts: number;
	/** No retry starts once this much time has passed since the first attempt. */
	maxTotalMs: number;
	baseDelayMs: number;
	maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
	maxAttempts: 5,
	maxTotalMs: 60_000,
	baseDelayMs: 250,
	maxDelayMs: 8_000,
};

/**
 * The token request is retried within the same time bound but more often: one refused renewal
 * fails every request of the run, and asking for a token again is harmless.
 */
export const TOKEN_RETRY_POLICY: RetryPolicy = { ...DEFAULT_RETRY_POLICY, maxAttempts: 8 };

const IDEMPOTENT_METHODS: IHttpRequestMethods[] = ['GET', 'HEAD', 'PUT', 'DELETE'];

/**
 * A request the service did not act on (429) is always retried. Other "come back later" answers,
 * transient faults and lost connections are retried only where a repeat is harmless: a create
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

/** How long to wait before the next attempt, or undefined to give up. */
export function nextRetryDelayMs(
	failure: HttpFailure,
	method: IHttpRequestMethods,
	attempt: number,
	elapsedMs: number,
	policy: RetryPolicy = DEFAULT_RETRY_POLICY,
	harmlessToRepeat?: boolean,
): number | undefined {
	if (attempt >= policy.maxAttempts || !isRetryable(failure, method, harmlessToRepeat)) {
		return undefined;
	}
	const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
	const asked = readRetryAfterMs(retryAfterHeader(failure));
	const delay = asked ?? backoff * (0.5 + Math.random() / 2);
	return elapsedMs + delay > policy.maxTotalMs ? undefined : delay;
}

function retryAfterHeader(failure: HttpFailure): unknown {
	const headers = failure.headers ?? {};
	const name = Object.keys(headers).find((key) => key.toLowerCase() === 'retry-after');
	return name === undefined ? undefined : headers[name];
}
