import { randomUUID } from 'node:crypto';

import {
	isFirstDelivery,
	SEEN_EVENT_LIMIT,
	SUBSCRIPTION_LIMIT,
} from '../../../nodes/InvoicingAssets/trigger/recentEvents';

describe('the memory of delivered events', () => {
	test('knows a repeated event ID of the same subscription', () => {
		const subscription = randomUUID();
		expect(isFirstDelivery(subscription, 'event-1')).toBe(true);
		expect(isFirstDelivery(subscription, 'event-1')).toBe(false);
		expect(isFirstDelivery(subscription, 'event-2')).toBe(true);
		expect(isFirstDelivery(randomUUID(), 'event-1')).toBe(true);
	});

	test('remembers the last 1,000 event IDs of a subscription', () => {
		expect(SEEN_EVENT_LIMIT).toBe(1000);
		const subscription = randomUUID();
		for (let index = 0; index < SEEN_EVENT_LIMIT + 5; index++) {
			expect(isFirstDelivery(subscription, `event-${index}`)).toBe(true);
		}
		expect(isFirstDelivery(subscription, `event-${SEEN_EVENT_LIMIT + 4}`)).toBe(false);
		expect(isFirstDelivery(subscription, 'event-5')).toBe(false);
		// The five oldest were forgotten; recording event-0 again forgets the next oldest, event-5.
		expect(isFirstDelivery(subscription, 'event-0')).toBe(true);
		expect(isFirstDelivery(subscription, 'event-6')).toBe(false);
		expect(isFirstDelivery(subscription, 'event-5')).toBe(true);
	});

	test('forgets the least recently used subscription beyond the limit', () => {
		const kept = randomUUID();
		const dropped = randomUUID();
		isFirstDelivery(dropped, 'event-1');
		isFirstDelivery(kept, 'event-1');
		for (let index = 0; index < SUBSCRIPTION_LIMIT - 1; index++) {
			isFirstDelivery(randomUUID(), 'event-1');
			isFirstDelivery(kept, 'event-1');
		}
		expect(isFirstDelivery(kept, 'event-1')).toBe(false);
		expect(isFirstDelivery(dropped, 'event-1')).toBe(true);
	});
});
