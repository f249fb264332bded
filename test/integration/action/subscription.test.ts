/* eslint-disable @n8n/community-nodes/no-restricted-imports */
import { setTimeout as sleep } from 'node:timers/promises';

import { REQUEST_TIMEOUT_MS } from '../../../nodes/InvoicingAssets/transport/retry';
import { REDACTED } from '../../../nodes/InvoicingAssets/transport/redaction';
import { shortenRequestTimeouts } from '../../harness/request-timeouts';
import {
	expectNoSecrets,
	jsonOf,
	pageRequests,
	pairedIndexes,
	run,
	searchList,
	useTestbed,
	type Json,
} from './helpers';

const bed = useTestbed();

const create = (parameters = {}) => ({
	resource: 'subscription',
	operation: 'create',
	notificationUrl: 'https://n8n.example.com/webhook/invoices',
	...parameters,
});
const list = (parameters = {}) => ({
	resource: 'subscription',
	operation: 'getAll',
	...parameters,
});
const remove = (id: string, mode = 'id') => ({
	resource: 'subscription',
	operation: 'delete',
	subscriptionId: { __rl: true, mode, value: id },
});

beforeEach(() => {
	for (const subscription of bed.testbed.sim.subscriptions.list()) {
		bed.testbed.sim.subscriptions.delete(subscription.id);
	}
});

describe('Subscription → Create', () => {
	test('registers the address with the chosen events, description and delivery key', async () => {
		const { testbed } = bed;
		const deliveryKey = `dk-${Math.random().toString(36).slice(2)}`;
		const result = await run(
			testbed,
			create({
				eventTypes: ['invoice.issued', 'invoice.paid'],
				additionalFields: { description: 'New invoices to accounting', deliveryKey },
			}),
		);

		expect(result.error).toBeUndefined();
		const [stored] = testbed.sim.subscriptions.list();
		expect(new URL(stored.notificationUrl).searchParams.get('apiKey')).toBe(deliveryKey);
		expect(stored).toMatchObject({
			eventTypes: ['invoice.issued', 'invoice.paid'],
			description: 'New invoices to accounting',
		});
		expect(jsonOf(result)).toEqual([
			{
				id: stored.id,
				notificationUrl: `https://n8n.example.com/webhook/invoices?apiKey=${REDACTED}`,
				eventTypes: ['invoice.issued', 'invoice.paid'],
				description: 'New invoices to accounting',
			},
		]);
		expectNoSecrets(testbed, result, [deliveryKey]);
	});

	test('All Events sends null, and the URL can come from each input item', async () => {
		const { testbed } = bed;
		const urls = ['https://a.example.com/hook', 'https://b.example.com/hook'];
		const result = await run(testbed, create({ notificationUrl: '={{ $json.url }}' }), {
			input: urls.map((url) => ({ json: { url } })),
		});
		expect(jsonOf(result).map((entry: Json) => entry.notificationUrl)).toEqual(urls);
		expect(pairedIndexes(result)).toEqual([0, 1]);
		const stored = testbed.sim.subscriptions.list();
		expect(stored.map((entry) => entry.notificationUrl).sort()).toEqual(urls);
		expect(stored.every((entry) => entry.eventTypes === null && entry.description === null)).toBe(
			true,
		);
		expect(new Set(jsonOf(result).map((entry: Json) => entry.id))).toEqual(
			new Set(stored.map((entry) => entry.id)),
		);
	});

	test('an http:// address is refused with the HTTPS and TLS 1.2 requirement, before any request', async () => {
		const { testbed } = bed;
		const result = await run(
			testbed,
			create({ notificationUrl: 'http://n8n.example.com/webhook/x' }),
		);
		expect(result.error?.message).toBe('The Notification URL must start with https:// [item 0]');
		expect(result.error?.description).toContain('TLS 1.2');
		expect(result.error?.description).toContain('https');
		expect(testbed.sim.log.count('subscriptions.create')).toBe(0);

		const continued = await run(testbed, create({ notificationUrl: '={{ $json.url }}' }), {
			input: [
				{ json: { url: 'http://x.example.com' } },
				{ json: { url: 'https://y.example.com/h' } },
			],
			continueOnFail: true,
		});
		expect(jsonOf(continued)[0]).toEqual({
			error: 'The Notification URL must start with https:// [item 0]',
			details: expect.stringContaining('TLS 1.2'),
		});
		expect(jsonOf(continued)[1].notificationUrl).toBe('https://y.example.com/h');
	});

	test('no Event Types chosen is refused with a clear message, before any request', async () => {
		const { testbed } = bed;
		const result = await run(testbed, create({ eventTypes: [] }));
		expect(result.error?.message).toBe(
			'No Event Types are chosen: choose at least one event type, or All Events [item 0]',
		);
		expect(result.error?.description).toContain('All Events');
		expect(testbed.sim.log.count('subscriptions.create')).toBe(0);
	});

	test('a create that fails with 500 is not repeated, so no duplicate can appear', async () => {
		const { testbed } = bed;
		testbed.sim.faults.add({ route: 'subscriptions.create', status: 500, times: 1 });
		const result = await run(testbed, create());
		expect(result.error?.message).toBe('The service was not able to process your request');
		expect(testbed.sim.log.count('subscriptions.create')).toBe(1);
	});

	test('a create answered 503 after the service made it is not repeated, and the error says it may exist', async () => {
		const { testbed } = bed;
		testbed.sim.faults.add({
			route: 'subscriptions.create',
			status: 503,
			retryAfter: 0,
			afterHandling: true,
			times: 1,
		});
		const result = await run(testbed, create());

		expect(result.error?.message).toBe(
			'Service unavailable - try again later or consider setting this node to retry automatically (in the node settings)',
		);
		expect(result.error?.description).toContain(
			'The service may have done what was asked before the failure: check (e.g. with Get Many) before running the node again.',
		);
		expect(testbed.sim.log.count('subscriptions.create')).toBe(1);
		expect(testbed.sim.subscriptions.list()).toHaveLength(1);
	});

	test('a delivery key the service echoes in its error text is hidden', async () => {
		const { testbed } = bed;
		const deliveryKey = `dk-${Math.random().toString(36).slice(2)}`;
		testbed.sim.faults.add({
			route: 'subscriptions.create',
			status: 422,
			body: {
				code: 'unreachable',
				message: `https://n8n.example.com/webhook/invoices?apiKey=${deliveryKey} did not answer a test call`,
				details: null,
			},
			times: 1,
		});
		const result = await run(testbed, create({ additionalFields: { deliveryKey } }), {
			continueOnFail: true,
		});

		expect(jsonOf(result)[0]).toEqual({
			error: 'The service could not process the values given',
			details: expect.stringContaining(
				`The service said: https://n8n.example.com/webhook/invoices?apiKey=${REDACTED} did not answer a test call.`,
			),
		});
		expectNoSecrets(testbed, result, [deliveryKey]);
	});

	test('a create the service does not answer within 30 s fails with the timeout, once', async () => {
		const { testbed } = bed;
		// The node asks n8n for a 30 s timeout; the test gives it 1 s, and a service 2 s late.
		const timeouts = shortenRequestTimeouts(REQUEST_TIMEOUT_MS, 1000);
		testbed.sim.faults.add({ route: 'subscriptions.create', latencyMs: 2000, times: 1 });
		const result = await run(testbed, create()).finally(() => timeouts.restore());

		// n8n's wording for the timeout's code (ECONNABORTED).
		expect(result.error?.message).toBe('The connection was aborted, perhaps the server is offline');
		expect(result.error?.description).toContain('may have done what was asked');
		expect(
			timeouts.shortened.filter((call) => call.endsWith('/subscription/v1/subscription')),
		).toEqual(['POST /subscription/v1/subscription']);
		// The simulator logs a request once it has handled it: a second later here.
		while (testbed.sim.log.count('subscriptions.create') === 0) await sleep(100);
		expect(testbed.sim.log.peakInFlight('subscriptions.create')).toBe(1);
		expect(testbed.sim.log.count('subscriptions.create')).toBe(1);
	});
});

describe('Subscription → Get Many and Delete', () => {
	async function createThree() {
		for (const name of ['one', 'two', 'three']) {
			await run(
				bed.testbed,
				create({
					notificationUrl: `https://${name}.example.com/h`,
					additionalFields: { description: name, deliveryKey: `key-${name}-secret` },
				}),
			);
		}
		return bed.testbed.sim.subscriptions.list();
	}

	test('Get Many lists them with the delivery keys hidden; Limit cuts the list', async () => {
		const { testbed } = bed;
		const stored = await createThree();
		const all = await run(testbed, list({ returnAll: true }));
		expect(jsonOf(all).map((entry: Json) => entry.id)).toEqual(stored.map((entry) => entry.id));
		for (const entry of jsonOf(all)) {
			expect(new URL(entry.notificationUrl).searchParams.get('apiKey')).toBe(REDACTED);
		}
		expectNoSecrets(testbed, all, ['key-one-secret', 'key-two-secret', 'key-three-secret']);

		const two = await run(testbed, list({ limit: 2 }));
		expect(jsonOf(two).map((entry: Json) => entry.id)).toEqual(
			stored.slice(0, 2).map((entry) => entry.id),
		);
	});

	test('Delete by ID and from the list removes it and answers { deleted: true }', async () => {
		const { testbed } = bed;
		const [first, second, third] = await createThree();

		const byId = await run(testbed, remove(first.id));
		expect(jsonOf(byId)).toEqual([{ deleted: true }]);

		const options = await searchList(testbed, 'searchSubscriptions', 'two');
		expect(options.results).toEqual([
			{ name: `two → https://two.example.com/h?apiKey=${REDACTED}`, value: second.id },
		]);
		const fromList = await run(testbed, remove(String(options.results[0].value), 'list'));
		expect(jsonOf(fromList)).toEqual([{ deleted: true }]);

		expect(testbed.sim.subscriptions.list().map((entry) => entry.id)).toEqual([third.id]);
		expect(
			testbed.sim.log
				.entries({ route: 'subscriptions.delete' })
				.map((entry) => [entry.params.id, entry.status]),
		).toEqual([
			[first.id, 204],
			[second.id, 204],
		]);
	});

	test('an answer that is not a subscription list is an error, never an empty list', async () => {
		const { testbed } = bed;
		testbed.sim.faults.add({
			route: 'subscriptions.list',
			status: 200,
			body: { value: [] },
			times: 1,
		});
		const result = await run(testbed, list({ returnAll: true }));
		expect(result.error?.message).toBe(
			'The service’s subscription list has a form the node cannot read; please report this',
		);
	});

	// 150 subscriptions: more than one page of the envelope (at most 100 a page).
	// A bare array is the whole list: asked for once. The envelope is read page by page.
	test.each([
		['a bare array', { subscriptionList: 'bare array' }, [[1, 100]]],
		[
			'the page envelope',
			{ subscriptionList: 'page envelope' },
			[
				[1, 100],
				[2, 100],
			],
		],
		[
			'the page envelope without a total',
			{ subscriptionList: 'page envelope', totalItems: 'null' },
			[
				[1, 100],
				[2, 100],
			],
		],
	] as const)(
		'the list answered as %s: Return All gives every subscription once, a Limit its first ones',
		async (_name, shape, pagesOf150) => {
			const { testbed } = bed;
			const stored = Array.from({ length: 150 }, (_, index) =>
				testbed.sim.subscriptions.create(
					{
						notificationUrl: `https://n8n.example.com/webhook/${index}?apiKey=key-${index}-secret`,
						eventTypes: null,
						description: `subscription ${index}`,
					},
					'2026-01-01T00:00:00Z',
					testbed.sim.defaultClient.clientId,
				),
			);
			const ids = stored.map((subscription) => subscription.id);
			testbed.sim.setListShape(shape);
			const pages = () => {
				const asked = pageRequests(testbed, 'subscriptions.list').map(({ page, pageSize }) => [
					page,
					pageSize,
				]);
				testbed.sim.log.reset();
				return asked;
			};

			const all = await run(testbed, list({ returnAll: true }));
			expect(all.error).toBeUndefined();
			expect(jsonOf(all).map((entry: Json) => entry.id)).toEqual(ids);
			expect(new URL(jsonOf(all)[149].notificationUrl).searchParams.get('apiKey')).toBe(REDACTED);
			expect(pages()).toEqual(pagesOf150);

			const first120 = await run(testbed, list({ limit: 120 }));
			expect(jsonOf(first120).map((entry: Json) => entry.id)).toEqual(ids.slice(0, 120));
			expect(pages()).toEqual(pagesOf150);

			const first5 = await run(testbed, list({ limit: 5 }));
			expect(jsonOf(first5).map((entry: Json) => entry.id)).toEqual(ids.slice(0, 5));
			expect(pages()).toEqual([[1, 5]]);
		},
	);

	test('Get Many with Limit and Delete with the ID from expressions, per item', async () => {
		const { testbed } = bed;
		const [first, second] = await createThree();
		const listed = await run(testbed, list({ limit: '={{ $json.limit }}' }), {
			input: [{ json: { limit: 1 } }, { json: { limit: 3 } }],
		});
		expect(jsonOf(listed).map((entry: Json) => entry.id)).toHaveLength(4);
		expect(pairedIndexes(listed)).toEqual([0, 1, 1, 1]);

		const removed = await run(testbed, remove('={{ $json.id }}'), {
			input: [{ json: { id: first.id } }, { json: { id: second.id } }],
		});
		expect(jsonOf(removed)).toEqual([{ deleted: true }, { deleted: true }]);
		expect(pairedIndexes(removed)).toEqual([0, 1]);
		expect(testbed.sim.subscriptions.list().map((entry) => entry.id)).not.toContain(first.id);
		expect(testbed.sim.subscriptions.list().map((entry) => entry.id)).not.toContain(second.id);
	});

	test('deleting an unknown subscription names it', async () => {
		const id = '3f2c9a7e-1b4d-4c8e-9f0a-2d6b8e1c5a47';
		const result = await run(bed.testbed, remove('={{ $json.id }}'), { input: [{ json: { id } }] });
		expect(result.error?.message).toBe(`Subscription '${id}' was not found`);
	});
});
