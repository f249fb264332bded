/**
 * Webhook deliveries: an HTTPS POST of a JSON ServiceEvent to each subscription that takes the
 * event type, at its exact notification URL.
 *
 * Choices where the contract is silent:
 * - One eventId per event; every subscription gets its own body (with its subscriptionId).
 * - TLS is verified against the default trust store (NODE_EXTRA_CA_CERTS included) plus the
 *   simulator's CA; TLS 1.2 at least. A notification URL that is not https is never called.
 * - A 2xx answer is success. Anything else, a network error or a timeout is retried after each
 *   wait of `retrySchedule` (real time), then given up. A subscription deleted meanwhile ends its
 *   retries. Order between events is not guaranteed.
 * - An event goes to the subscriptions that exist when it occurs, and only while their API key
 *   lives: a subscription whose key was deleted or has expired receives nothing more, retries
 *   included.
 * - With `activationMs`, a new subscription receives only the events that occur from that long
 *   after its `createdAt` on (a dispatcher that learns of new subscriptions late; the contract
 *   allows up to 5 minutes, NEW_SUBSCRIPTION_RECEIVES_EVENTS_WITHIN_MS). Default 0.
 * - With `duplicate`, each delivery is made a second time, with the same body, once the first
 *   has completed.
 * - The attempts log keeps the URL with the apiKey value redacted and scrubs it from errors.
 */
import { randomUUID } from 'node:crypto';
import { getCACertificates, performance } from '../tools/node-apis';
import { Agent, request } from 'undici';

import { JSON_MEDIA_TYPE, NOTIFICATION_URL_PROTOCOL, type ServiceEvent } from './contract';
import type { SimulatorClock } from './clock';
import type { ContractMonitor } from './contract-check';
import { redactText, redactUrl, secretsOfUrl } from './redact';
import { Sleeper } from './sleeper';
import type { SubscriptionStore } from './subscriptions';
import type { DeliveryAttempt, DeliveryOptions, DeliveryOutcome, EmittedEvent } from './types';

export const DEFAULT_DELIVERY_OPTIONS: DeliveryOptions = {
	retrySchedule: [1000, 5000, 30000],
	duplicate: false,
	timeoutMs: 10_000,
	activationMs: 0,
};

export const MAX_DELIVERY_ATTEMPTS = 20;

/** The simulator's events have every field of the contract set. */
type SimulatedEvent = ServiceEvent & {
	occurredAt: string;
	subscriptionId: string;
	data: Record<string, unknown>;
};
export const DELIVERY_USER_AGENT = 'invoicing-assets-simulator/1.0';

export class DeliveryEngine {
	private attempts: DeliveryAttempt[] = [];
	private inFlight = new Set<Promise<unknown>>();
	private controllers = new Set<AbortController>();
	private sleeper = new Sleeper();
	private agent: Agent;
	private closed = false;
	private currentOptions: DeliveryOptions;

	constructor(
		private readonly clock: SimulatorClock,
		private readonly subscriptions: SubscriptionStore,
		trustedCaPems: string[],
		options: Partial<DeliveryOptions> = {},
		private readonly contract?: ContractMonitor,
		/** Whether the subscription's API key still lives (exists and has not expired). */
		private readonly keyLives: (subscriptionId: string) => boolean = () => true,
	) {
		this.currentOptions = { ...DEFAULT_DELIVERY_OPTIONS };
		this.setOptions(options);
		const ca = [...new Set([...getCACertificates('default'), ...trustedCaPems])];
		this.agent = new Agent({
			connect: { ca, minVersion: 'TLSv1.2' },
			keepAliveTimeout: 2000,
		});
	}

	get options(): DeliveryOptions {
		return { ...this.currentOptions, retrySchedule: [...this.currentOptions.retrySchedule] };
	}

	setOptions(options: Partial<DeliveryOptions>): DeliveryOptions {
		const next = { ...this.currentOptions };
		if (options.retrySchedule !== undefined) {
			const schedule = options.retrySchedule;
			if (
				!Array.isArray(schedule) ||
				schedule.length >= MAX_DELIVERY_ATTEMPTS ||
				!schedule.every((ms) => Number.isFinite(ms) && ms >= 0)
			) {
				throw new Error(
					`retrySchedule must be an array of at most ${MAX_DELIVERY_ATTEMPTS - 1} waits in ms (numbers of at least 0).`,
				);
			}
			next.retrySchedule = [...schedule];
		}
		if (options.duplicate !== undefined) {
			if (typeof options.duplicate !== 'boolean') throw new Error('duplicate must be a boolean.');
			next.duplicate = options.duplicate;
		}
		if (options.timeoutMs !== undefined) {
			if (!(Number.isFinite(options.timeoutMs) && options.timeoutMs > 0)) {
				throw new Error('timeoutMs must be a number greater than 0.');
			}
			next.timeoutMs = options.timeoutMs;
		}
		if (options.activationMs !== undefined) {
			if (!(Number.isFinite(options.activationMs) && options.activationMs >= 0)) {
				throw new Error('activationMs must be a number of at least 0.');
			}
			next.activationMs = options.activationMs;
		}
		this.currentOptions = next;
		return this.options;
	}

	/** Attempts so far, oldest first. */
	entries(filter: { eventId?: string; subscriptionId?: string } = {}): DeliveryAttempt[] {
		return this.attempts
			.filter(
				(entry) =>
					(filter.eventId === undefined || entry.eventId === filter.eventId) &&
					(filter.subscriptionId === undefined || entry.subscriptionId === filter.subscriptionId),
			)
			.map((entry) => ({ ...entry }));
	}

	reset() {
		this.attempts = [];
	}

	/** Deliveries running or waiting for a retry. */
	get pending(): number {
		return this.inFlight.size;
	}

	/** `deviation` says why the event breaks the contract on purpose (exempt from its check). */
	emit(
		eventType: string,
		data: Record<string, unknown>,
		{ deviation }: { deviation?: string } = {},
	): EmittedEvent {
		if (typeof eventType !== 'string' || eventType.trim() === '') {
			throw new Error('eventType must be a non-empty string.');
		}
		if (typeof data !== 'object' || data === null || Array.isArray(data)) {
			throw new Error('Event data must be an object.');
		}
		const eventId = randomUUID();
		const occurredAt = this.clock.timestamp();
		const options = this.options;
		const targets = this.subscriptions
			.list()
			.filter((sub) => sub.eventTypes === null || sub.eventTypes.includes(eventType))
			.filter((sub) => Date.parse(sub.createdAt) + options.activationMs <= this.clock.nowMs())
			.filter((sub) => this.keyLives(sub.id));
		const deliveries = targets.map((subscription) => {
			const event: SimulatedEvent = {
				eventId,
				eventType,
				occurredAt,
				subscriptionId: subscription.id,
				data: structuredClone(data),
			};
			if (isHttps(subscription.notificationUrl)) {
				this.contract?.checkDelivery(subscription.notificationUrl, event, deviation);
			}
			const done = this.track(this.deliver(subscription.notificationUrl, event, options));
			return { subscriptionId: subscription.id, event, done };
		});
		const done = Promise.all(deliveries.map((delivery) => delivery.done)).then((all) => all.flat());
		return { eventId, eventType, occurredAt, data: structuredClone(data), deliveries, done };
	}

	/** Resolves once no delivery is running or waiting for a retry. */
	async waitForIdle(timeoutMs?: number): Promise<void> {
		const deadline = timeoutMs === undefined ? undefined : performance.now() + timeoutMs;
		while (this.inFlight.size > 0) {
			if (deadline !== undefined) {
				const left = deadline - performance.now();
				if (left <= 0) {
					throw new Error(
						`${this.inFlight.size} deliveries still in flight after ${timeoutMs} ms.`,
					);
				}
				const timer = new Sleeper();
				await Promise.race([Promise.allSettled([...this.inFlight]), timer.sleep(left)]);
				timer.cancelAll();
			} else {
				await Promise.allSettled([...this.inFlight]);
			}
		}
	}

	/** Stops retries and aborts running attempts, then waits for them to settle. */
	async close() {
		this.closed = true;
		this.sleeper.cancelAll();
		for (const controller of this.controllers) controller.abort();
		await Promise.allSettled([...this.inFlight]);
		await this.agent.close();
	}

	private track<T>(promise: Promise<T>): Promise<T> {
		this.inFlight.add(promise);
		void promise.finally(() => this.inFlight.delete(promise)).catch(() => undefined);
		return promise;
	}

	private async deliver(
		url: string,
		event: SimulatedEvent,
		options: DeliveryOptions,
	): Promise<DeliveryOutcome[]> {
		const first = await this.deliverCopy(url, event, options, 1);
		if (!options.duplicate || first.result === 'cancelled' || first.result === 'refused') {
			return [first];
		}
		return [first, await this.deliverCopy(url, event, options, 2)];
	}

	private async deliverCopy(
		url: string,
		event: SimulatedEvent,
		options: DeliveryOptions,
		copy: number,
	): Promise<DeliveryOutcome> {
		const body = JSON.stringify(event);
		const secrets = secretsOfUrl(url);
		const shownUrl = redactUrl(url);
		const maxAttempts = options.retrySchedule.length + 1;
		let lastStatus: number | null = null;
		let lastError: string | null = null;
		const outcome = (result: DeliveryOutcome['result'], attempts: number): DeliveryOutcome => ({
			eventId: event.eventId,
			subscriptionId: event.subscriptionId,
			copy,
			result,
			attempts,
			lastStatus,
			lastError,
		});
		const record = (attempt: number, result: DeliveryAttempt['result'], durationMs: number) =>
			this.attempts.push({
				eventId: event.eventId,
				eventType: event.eventType,
				subscriptionId: event.subscriptionId,
				url: shownUrl,
				attempt,
				copy,
				at: this.clock.timestamp(),
				status: lastStatus,
				error: lastError,
				durationMs,
				result,
			});

		if (!isHttps(url)) {
			lastError = `Not delivered: the notification URL is not ${NOTIFICATION_URL_PROTOCOL} (TLS 1.2 or later is required).`;
			record(0, 'refused', 0);
			return outcome('refused', 0);
		}
		for (let attempt = 1; attempt <= maxAttempts; attempt++) {
			if (
				this.closed ||
				!this.subscriptions.has(event.subscriptionId) ||
				!this.keyLives(event.subscriptionId)
			) {
				lastError = this.closed
					? 'Simulator closed.'
					: this.subscriptions.has(event.subscriptionId)
						? 'The subscription’s API key expired.'
						: 'Subscription deleted.';
				record(attempt, 'cancelled', 0);
				return outcome('cancelled', attempt - 1);
			}
			const started = performance.now();
			const controller = new AbortController();
			this.controllers.add(controller);
			try {
				const response = await request(url, {
					method: 'POST',
					body,
					headers: { 'content-type': JSON_MEDIA_TYPE, 'user-agent': DELIVERY_USER_AGENT },
					dispatcher: this.agent,
					signal: controller.signal,
					headersTimeout: options.timeoutMs,
					bodyTimeout: options.timeoutMs,
				});
				await response.body.dump();
				lastStatus = response.statusCode;
				lastError = null;
			} catch (error) {
				lastStatus = null;
				lastError = redactText(describeError(error), secrets);
			} finally {
				this.controllers.delete(controller);
			}
			const durationMs = Math.round(performance.now() - started);
			if (lastStatus !== null && lastStatus >= 200 && lastStatus < 300) {
				record(attempt, 'delivered', durationMs);
				return outcome('delivered', attempt);
			}
			if (attempt === maxAttempts || this.closed) {
				record(attempt, 'failed', durationMs);
				return outcome('failed', attempt);
			}
			record(attempt, 'retrying', durationMs);
			if (!(await this.sleeper.sleep(options.retrySchedule[attempt - 1]))) {
				return outcome('cancelled', attempt);
			}
		}
		return outcome('failed', maxAttempts);
	}
}

function isHttps(url: string): boolean {
	try {
		return new URL(url).protocol === NOTIFICATION_URL_PROTOCOL;
	} catch {
		return false;
	}
}

function describeError(error: unknown): string {
	if (!(error instanceof Error)) return String(error);
	const cause = (error as { cause?: unknown }).cause;
	const code =
		(error as { code?: unknown }).code ?? (cause as { code?: unknown } | undefined)?.code;
	const causeText =
		cause instanceof Error && cause.message !== error.message ? ` (${cause.message})` : '';
	return `${typeof code === 'string' ? `${code}: ` : ''}${error.message}${causeText}`;
}
