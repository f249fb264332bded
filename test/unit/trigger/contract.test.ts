import { ALL_EVENTS, selectedEventTypes } from '../../../nodes/InvoicingAssets/shared/events';
import {
	isServiceEvent,
	readCreatedSubscriptionId,
	readSubscriptionListPage,
} from '../../../nodes/InvoicingAssets/transport/responses';

/** The subscription and event parts of the contract, as the trigger reads them. */
const GUID = '3f2c9a7e-1b4d-4c8e-9f0a-2d6b8e1c5a47';
const subscription = (id: string) => ({
	id,
	notificationUrl: `https://n8n.example.com/webhook/${id}`,
	eventTypes: null,
	description: null,
	createdAt: '2025-01-01T00:00:00Z',
});

describe('readCreatedSubscriptionId', () => {
	test('takes only a GUID, in any of the accepted forms', () => {
		expect(readCreatedSubscriptionId(GUID.toUpperCase())).toBe(GUID.toUpperCase());
		expect(readCreatedSubscriptionId(`"${GUID}"`)).toBe(GUID);
		expect(readCreatedSubscriptionId({ id: GUID })).toBe(GUID);
	});

	test.each([
		['an ID that is not a GUID', 'sub-1'],
		['a GUID with text around it', `id ${GUID}`],
		['a GUID in braces', `{${GUID}}`],
		['a JSON ID that is not a GUID', '{"id":"sub-1"}'],
		['a numeric ID', { id: 7 }],
		['HTML', '<html>Created</html>'],
	])('refuses %s', (_name, body) => {
		expect(readCreatedSubscriptionId(body)).toBeUndefined();
	});
});

describe('readSubscriptionListPage', () => {
	test('a bare array answering page 1 is the whole list: one page that reaches its total', () => {
		const list = [subscription('a'), subscription('b')];
		const whole = { items: list, page: 1, pageSize: 2, totalItems: 2 };
		expect(readSubscriptionListPage(list, 1)).toEqual(whole);
		expect(readSubscriptionListPage(JSON.stringify(list), 1)).toEqual(whole);
		expect(readSubscriptionListPage([], 1)).toEqual({
			items: [],
			page: 1,
			pageSize: 0,
			totalItems: 0,
		});
	});

	test('the page envelope is a page on any page, its total null unless a whole number', () => {
		const page = { items: [subscription('c')], page: 2, pageSize: 2, totalItems: 3 };
		expect(readSubscriptionListPage(page, 2)).toEqual(page);
		expect(readSubscriptionListPage(JSON.stringify(page), 2)).toEqual(page);
		expect(readSubscriptionListPage({ ...page, page: 1 }, 1)).toEqual({ ...page, page: 1 });
		expect(readSubscriptionListPage({ items: [], totalItems: 'many' }, 1)).toEqual({
			items: [],
			totalItems: null,
		});
	});

	test.each([
		['text', 'Service Unavailable', 1],
		['null', null, 1],
		['an object without items', { subscriptions: [] }, 1],
		['items that are not an array', { items: {} }, 1],
		['an entry without an id', [subscription('a'), { notificationUrl: 'https://x' }], 1],
		['an entry with an empty id', [{ ...subscription('a'), id: '' }], 1],
		['an entry that is not an object', ['a'], 1],
		['an envelope entry without an id', { items: [{ notificationUrl: 'https://x' }] }, 2],
		['a bare array after page 1 (the form changed mid-read)', [subscription('a')], 2],
	])('%s is unreadable (undefined), never an empty list', (_name, body, page) => {
		expect(readSubscriptionListPage(body, page)).toBeUndefined();
	});
});

describe('isServiceEvent', () => {
	const event = {
		eventId: 'e-1',
		eventType: 'invoice.issued',
		occurredAt: '2025-01-02T03:04:05Z',
		subscriptionId: GUID,
		data: { invoiceNumber: 'INV-1' },
	};

	test.each([
		['a complete event', {}],
		['null optional fields', { occurredAt: null, subscriptionId: null, data: null }],
		[
			'absent optional fields',
			{ occurredAt: undefined, subscriptionId: undefined, data: undefined },
		],
		['an empty data object', { data: {} }],
	])('accepts %s', (_name, change) => {
		expect(isServiceEvent({ ...event, ...change })).toBe(true);
	});

	test.each([
		['no eventId', { eventId: undefined }],
		['a null eventId', { eventId: null }],
		['an empty eventType', { eventType: '' }],
		['a numeric occurredAt', { occurredAt: 5 }],
		['a numeric subscriptionId', { subscriptionId: 5 }],
		['data as an array', { data: [] }],
		['data as text', { data: 'x' }],
	])('refuses %s', (_name, change) => {
		expect(isServiceEvent({ ...event, ...change })).toBe(false);
	});
});

describe('selectedEventTypes', () => {
	test('All Events is null, chosen types are kept, nothing chosen is undefined (not "all")', () => {
		expect(selectedEventTypes([ALL_EVENTS])).toBeNull();
		expect(selectedEventTypes(['invoice.paid', ALL_EVENTS])).toBeNull();
		expect(selectedEventTypes(['invoice.paid'])).toEqual(['invoice.paid']);
		for (const nothing of [[], '', undefined, null, ['']]) {
			expect(selectedEventTypes(nothing)).toBeUndefined();
		}
	});
});
