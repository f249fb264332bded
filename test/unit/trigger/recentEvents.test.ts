import { randomUUID } from 'node:crypto';

import {
	isFirstDelivery,
	SEEN_EVENT_LIMIT,
	TRIGGER_LIMIT,
} from '../../../nodes/InvoicingAssets/trigger/recentEvents';

/** What the memory holds; that it keeps each event once through n8n: deliveries.test.ts. */
describe('the memory of delivered events', () => {
	test(`remembers the last ${SEEN_EVENT_LIMIT} event IDs of a trigger`, () => {
		expect(SEEN_EVENT_LIMIT).toBe(1000);
		const trigger = randomUUID();
		for (let index = 0; index < SEEN_EVENT_LIMIT + 5; index++) {
			expect(isFirstDelivery(trigger, `event-${index}`)).toBe(true);
		}
		expect(isFirstDelivery(trigger, `event-${SEEN_EVENT_LIMIT + 4}`)).toBe(false);
		expect(isFirstDelivery(trigger, 'event-5')).toBe(false);
		// The five oldest were forgotten; recording event-0 again forgets the next oldest, event-5.
		expect(isFirstDelivery(trigger, 'event-0')).toBe(true);
		expect(isFirstDelivery(trigger, 'event-5')).toBe(true);
	});

	test(`remembers ${TRIGGER_LIMIT} triggers; beyond, the one delivered to least recently is forgotten`, () => {
		expect(TRIGGER_LIMIT).toBe(100);
		const triggers = Array.from({ length: TRIGGER_LIMIT }, () => randomUUID());
		for (const trigger of triggers) isFirstDelivery(trigger, 'e-1');
		// The first trigger gets a delivery again, so the second is now the least recent.
		expect(isFirstDelivery(triggers[0], 'e-2')).toBe(true);

		expect(isFirstDelivery(randomUUID(), 'e-1')).toBe(true);
		expect(isFirstDelivery(triggers[0], 'e-1')).toBe(false);
		expect(isFirstDelivery(triggers[2], 'e-1')).toBe(false);
		expect(isFirstDelivery(triggers[1], 'e-1')).toBe(true);
	});
});
