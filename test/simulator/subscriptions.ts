/**
 * Webhook subscriptions, each belonging to the client (API key, and so environment) that created it.
 *
 * Choices where the contract is silent:
 * - A client sees only its own subscriptions: the list shows the caller's, and deleting another
 *   client's subscription answers 404 exactly as for an unknown one.
 * - `eventTypes` and `description` may be left out of the create body (read as null); unknown
 *   fields are ignored. `eventTypes` is null (every event) or a non-empty array of known types
 *   without repeats.
 * - The notification URL is kept exactly as sent (its apiKey argument included) and must be an
 *   absolute https URL of at most 2,048 characters. The same URL may be subscribed twice.
 * - The list is in creation order.
 * - A subscription lives as long as its key: deleting the key in the portal deletes the key's
 *   subscriptions, and one whose key has expired receives no more deliveries (deliveries.ts).
 */
import { randomUUID } from 'node:crypto';

import {
	EVENT_TYPES,
	NOTIFICATION_URL_PROTOCOL,
	type Subscription,
	type SubscriptionRequest,
} from './contract';

export const MAX_NOTIFICATION_URL_LENGTH = 2048;
export const MAX_DESCRIPTION_LENGTH = 500;

export type Validation<T> =
	| { ok: true; value: T }
	| { ok: false; code: string; message: string; details: unknown };

export class SubscriptionStore {
	private items = new Map<string, Subscription>();

	/** The client ID that owns each subscription. */
	private owners = new Map<string, string>();

	get size(): number {
		return this.items.size;
	}

	create(
		request: SubscriptionRequest,
		createdAt: string,
		owner: string,
		id: string = randomUUID(),
	): Subscription {
		const subscription: Subscription = {
			id,
			notificationUrl: request.notificationUrl,
			eventTypes: request.eventTypes ? [...request.eventTypes] : null,
			description: request.description,
			createdAt,
		};
		this.items.set(subscription.id, subscription);
		this.owners.set(subscription.id, owner);
		return { ...subscription };
	}

	/** Stores a subscription as given, without validation (data made outside the public API). */
	insert(subscription: Subscription, owner: string): Subscription {
		this.items.set(subscription.id, { ...subscription });
		this.owners.set(subscription.id, owner);
		return { ...subscription };
	}

	/** The subscriptions of one client, or of every client when no owner is given. */
	list(owner?: string): Subscription[] {
		return [...this.items.values()]
			.filter((item) => owner === undefined || this.owners.get(item.id) === owner)
			.map((item) => ({
				...item,
				eventTypes: item.eventTypes ? [...item.eventTypes] : null,
			}));
	}

	ownerOf(id: string): string | undefined {
		return this.owners.get(id);
	}

	get(id: string): Subscription | undefined {
		const item = this.items.get(id);
		return item ? { ...item } : undefined;
	}

	has(id: string): boolean {
		return this.items.has(id);
	}

	/** Deletes every subscription of `owner` (its key was deleted); returns them. */
	deleteAllOf(owner: string): Subscription[] {
		const ended = this.list(owner);
		for (const subscription of ended) this.delete(subscription.id);
		return ended;
	}

	/** Deletes a subscription (only one of `owner`'s, when given); false when there is none. */
	delete(id: string, owner?: string): boolean {
		if (owner !== undefined && this.owners.get(id) !== owner) return false;
		this.owners.delete(id);
		return this.items.delete(id);
	}
}

export function validateSubscriptionRequest(body: unknown): Validation<SubscriptionRequest> {
	if (typeof body !== 'object' || body === null || Array.isArray(body)) {
		return invalid('invalid_body', 'The request body must be a JSON object.', null);
	}
	const fields = body as Record<string, unknown>;
	const url = fields.notificationUrl;
	if (typeof url !== 'string' || url.trim() === '') {
		return invalid(
			'invalid_notification_url',
			'notificationUrl is required: the absolute https URL that receives the events.',
			{ field: 'notificationUrl' },
		);
	}
	if (url.length > MAX_NOTIFICATION_URL_LENGTH) {
		return invalid(
			'invalid_notification_url',
			`notificationUrl is longer than ${MAX_NOTIFICATION_URL_LENGTH} characters.`,
			{ field: 'notificationUrl' },
		);
	}
	let parsed: URL | undefined;
	try {
		parsed = new URL(url);
	} catch {
		parsed = undefined;
	}
	if (!parsed || !parsed.hostname) {
		return invalid(
			'invalid_notification_url',
			'notificationUrl must be an absolute URL, for example https://example.com/webhook.',
			{ field: 'notificationUrl' },
		);
	}
	if (parsed.protocol !== NOTIFICATION_URL_PROTOCOL) {
		return invalid(
			'invalid_notification_url',
			`notificationUrl must use https: the receiving service must be secured with TLS 1.2 or later; plain HTTP is not supported (got '${parsed.protocol}').`,
			{ field: 'notificationUrl' },
		);
	}

	const eventTypes = fields.eventTypes;
	if (eventTypes !== undefined && eventTypes !== null) {
		if (!Array.isArray(eventTypes) || eventTypes.length === 0) {
			return invalid(
				'invalid_event_types',
				'eventTypes must be null (every event) or a non-empty array of event types.',
				{ field: 'eventTypes', allowed: [...EVENT_TYPES] },
			);
		}
		const unknown = eventTypes.filter(
			(type) => typeof type !== 'string' || !(EVENT_TYPES as readonly string[]).includes(type),
		);
		if (unknown.length > 0) {
			return invalid(
				'invalid_event_types',
				`Unknown event types: ${unknown.map((type) => JSON.stringify(type)).join(', ')}. Allowed: ${EVENT_TYPES.join(', ')}.`,
				{ field: 'eventTypes', allowed: [...EVENT_TYPES] },
			);
		}
		if (new Set(eventTypes).size !== eventTypes.length) {
			return invalid('invalid_event_types', 'eventTypes lists an event type more than once.', {
				field: 'eventTypes',
				allowed: [...EVENT_TYPES],
			});
		}
	}

	const description = fields.description;
	if (description !== undefined && description !== null && typeof description !== 'string') {
		return invalid('invalid_description', 'description must be a string or null.', {
			field: 'description',
		});
	}
	if (typeof description === 'string' && description.length > MAX_DESCRIPTION_LENGTH) {
		return invalid(
			'invalid_description',
			`description is longer than ${MAX_DESCRIPTION_LENGTH} characters.`,
			{ field: 'description' },
		);
	}

	return {
		ok: true,
		value: {
			notificationUrl: url,
			eventTypes: eventTypes === undefined || eventTypes === null ? null : (eventTypes as string[]),
			description: description === undefined ? null : (description as string | null),
		},
	};
}

function invalid(code: string, message: string, details: unknown): Validation<never> {
	return { ok: false, code, message, details };
}
