import { randomUUID } from 'node:crypto';

import {
	isFirstDelivery,
	SEEN_EVENT_LIMIT,
	TOTAL_EVENT_LIMIT,
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

	test('1,000 triggers in one process each still know their repeats', () => {
		const triggers = Array.from({ length: 1000 }, () => randomUUID());
		for (const trigger of triggers) {
			for (let index = 0; index < 5; index++) isFirstDelivery(trigger, `event-${index}`);
		}
		for (const trigger of triggers) {
			for (let index = 0; index < 5; index++) {
				expect(isFirstDelivery(trigger, `event-${index}`)).toBe(false);
			}
		}
	});

	test(`holds ${TOTAL_EVENT_LIMIT / SEEN_EVENT_LIMIT} triggers × ${SEEN_EVENT_LIMIT} events; beyond, the process's oldest events go first`, () => {
		expect(TOTAL_EVENT_LIMIT).toBe(100_000);
		const triggers = Array.from({ length: TOTAL_EVENT_LIMIT / SEEN_EVENT_LIMIT }, () =>
			randomUUID(),
		);
		for (const trigger of triggers) {
			for (let index = 0; index < SEEN_EVENT_LIMIT; index++) isFirstDelivery(trigger, `e-${index}`);
		}
		expect(isFirstDelivery(triggers[0], 'e-0')).toBe(false);
		expect(isFirstDelivery(triggers[99], `e-${SEEN_EVENT_LIMIT - 1}`)).toBe(false);

		// 500 events of new triggers: the 500 oldest of the process, those of the first trigger, go.
		for (let index = 0; index < 500; index++) isFirstDelivery(randomUUID(), 'new');
		expect(isFirstDelivery(triggers[0], 'e-499')).toBe(true);
		expect(isFirstDelivery(triggers[0], 'e-501')).toBe(false);
		expect(isFirstDelivery(triggers[1], 'e-0')).toBe(false);
	});
});
