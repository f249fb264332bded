import { NodeOperationError } from 'n8n-workflow';

import type { Testbed } from '../../harness/testbed';
import type { TriggerHost } from '../../harness/webhooks';
import {
	eventually,
	keyOf,
	onlySubscription,
	resetSimulator,
	sha256Hex,
	startHost,
	startTriggerTestbed,
	withoutQuery,
	ownership,
} from './helpers';

let testbed: Testbed;
let host: TriggerHost;

beforeAll(async () => {
	testbed = await startTriggerTestbed();
});

afterEach(async () => {
	jest.restoreAllMocks();
	await host?.close();
	await resetSimulator(testbed);
});

afterAll(async () => {
	await testbed.close();
});

const methods = (h: TriggerHost) => h.hookCalls.map((call) => call.method);

describe('publish and unpublish', () => {
	test('publish creates one https subscription carrying a key; checkExists finds it; unpublish deletes it', async () => {
		host = await startHost(testbed);
		await host.publish();

		const subscription = onlySubscription(testbed);
		expect(subscription.notificationUrl.startsWith('https://')).toBe(true);
		expect(withoutQuery(subscription.notificationUrl)).toBe(host.webhookUrl);
		expect(new URL(subscription.notificationUrl).pathname).toBe(
			`/webhook/${host.node.webhookId}/webhook`,
		);
		const key = keyOf(subscription);
		// 32 random bytes in base64url, stored as its SHA-256 only.
		expect(Buffer.from(key, 'base64url').toString('base64url')).toBe(key);
		expect(Buffer.from(key, 'base64url').length).toBe(32);
		expect(subscription.eventTypes).toBeNull();
		expect(subscription.description).toBeNull();
		expect(host.nodeStaticData).toEqual({
			...ownership(testbed, host),
			subscriptionId: subscription.id,
			deliveryKeyHash: sha256Hex(key),
		});
		expect(methods(host)).toEqual(['checkExists', 'create']);

		expect(await host.call('checkExists')).toBe(true);
		expect(testbed.sim.subscriptions.list()).toHaveLength(1);

		await host.unpublish();
		expect(testbed.sim.subscriptions.list()).toEqual([]);
		expect(host.nodeStaticData).toEqual({});
		expect(testbed.sim.log.count('subscriptions.delete', { status: 204 })).toBe(1);
	});

	test('the chosen event types and description are sent with the subscription', async () => {
		host = await startHost(testbed, {
			events: ['invoice.issued', 'invoice.paid'],
			options: { description: 'New invoices to accounting' },
		});
		await host.publish();
		const subscription = onlySubscription(testbed);
		expect(subscription.eventTypes).toEqual(['invoice.issued', 'invoice.paid']);
		expect(subscription.description).toBe('New invoices to accounting');
	});

	test('All Events among other choices subscribes to every event (null)', async () => {
		host = await startHost(testbed, { events: ['invoice.paid', '*'] });
		await host.publish();
		expect(onlySubscription(testbed).eventTypes).toBeNull();
	});

	test('publishing twice keeps the one subscription (checkExists answers true)', async () => {
		host = await startHost(testbed);
		await host.publish();
		const first = onlySubscription(testbed);
		const staticData = host.nodeStaticData;

		await host.publish();
		expect(onlySubscription(testbed)).toEqual(first);
		expect(host.nodeStaticData).toEqual(staticData);
		expect(methods(host)).toEqual(['checkExists', 'create', 'checkExists']);
		expect(host.hookCalls[2].result).toBe(true);
		expect(testbed.sim.log.count('subscriptions.create')).toBe(1);
	});

	test('each trigger gets its own subscription and key', async () => {
		host = await startHost(testbed);
		const other = await startHost(testbed);
		try {
			await host.publish();
			await other.publish();
			const subscriptions = testbed.sim.subscriptions.list();
			expect(subscriptions).toHaveLength(2);
			expect(new Set(subscriptions.map(keyOf)).size).toBe(2);
			expect(host.nodeStaticData.subscriptionId).not.toBe(other.nodeStaticData.subscriptionId);
		} finally {
			await other.close();
		}
	});

	test('unpublish when the subscription is already gone (404) succeeds and clears static data', async () => {
		host = await startHost(testbed);
		await host.publish();
		testbed.sim.subscriptions.delete(onlySubscription(testbed).id);

		await host.unpublish();
		expect(testbed.sim.log.count('subscriptions.delete', { status: 404 })).toBe(1);
		expect(host.nodeStaticData).toEqual({});
	});

	test('unpublish with nothing stored succeeds without calling the service', async () => {
		host = await startHost(testbed);
		await host.unpublish();
		expect(host.hookCalls.map((call) => call.result)).toEqual([true]);
		expect(testbed.sim.log.count('subscriptions.delete')).toBe(0);
	});

	test('a failing delete is thrown (n8n retries it) and the subscription stays stored', async () => {
		host = await startHost(testbed);
		await host.publish();
		const stored = host.nodeStaticData;
		testbed.sim.faults.add({ route: 'subscriptions.delete', status: 403 });

		await expect(host.unpublish()).rejects.toThrow('The API key is not allowed to do this');
		expect(host.nodeStaticData).toEqual(stored);
		expect(testbed.sim.subscriptions.list()).toHaveLength(1);

		testbed.sim.faults.clear();
		await host.unpublish();
		expect(testbed.sim.subscriptions.list()).toEqual([]);
		expect(host.nodeStaticData).toEqual({});
	});
	test('after a failed delete, a publish for other events replaces the subscription (exact event sets)', async () => {
		host = await startHost(testbed, { events: ['invoice.issued', 'invoice.paid'] });
		await host.publish();
		testbed.sim.faults.add({ route: 'subscriptions.delete', status: 500 });
		await host.unpublish().catch(() => undefined);
		testbed.sim.faults.clear();

		host.setParameters({ events: ['invoice.paid'] });
		await host.publish();
		expect(onlySubscription(testbed)).toMatchObject({
			id: host.nodeStaticData.subscriptionId,
			eventTypes: ['invoice.paid'],
		});
	});
});

describe('a subscription deleted out of band', () => {
	test('one the list leaves out is deleted before it is forgotten, so none is orphaned', async () => {
		host = await startHost(testbed);
		await host.publish();
		testbed.sim.faults.add({ route: 'subscriptions.list', status: 200, body: [], times: 1 });

		expect(await host.call('checkExists')).toBe(false);
		expect(testbed.sim.subscriptions.list()).toEqual([]);
		expect(testbed.sim.log.count('subscriptions.delete', { status: 204 })).toBe(1);
		expect(host.nodeStaticData).toEqual({});

		await host.publish();
		expect(onlySubscription(testbed).id).toBe(host.nodeStaticData.subscriptionId);
	});

	test('publishing again creates exactly one new subscription with a new key', async () => {
		host = await startHost(testbed);
		await host.publish();
		const old = onlySubscription(testbed);
		testbed.sim.subscriptions.delete(old.id);

		await host.publish();
		const recheck = host.hookCalls[2];
		expect(recheck).toMatchObject({ method: 'checkExists', result: false, staticDataAfter: {} });
		const renewed = onlySubscription(testbed);
		expect(renewed.id).not.toBe(old.id);
		expect(keyOf(renewed) === keyOf(old)).toBe(false);
		expect(host.nodeStaticData).toEqual({
			...ownership(testbed, host),
			subscriptionId: renewed.id,
			deliveryKeyHash: sha256Hex(keyOf(renewed)),
		});
	});
});

describe('a failed create', () => {
	test.each([
		['a 500 answer', { status: 500 }, 'The service was not able to process your request'],
		[
			'a dropped connection',
			{ drop: true },
			'The connection to the server was closed unexpectedly, perhaps it is offline',
		],
	])(
		'%s: publish fails, the cleanup delete with empty static data succeeds, nothing is left',
		async (_name, fault, message) => {
			host = await startHost(testbed);
			testbed.sim.faults.add({ route: 'subscriptions.create', times: 1, ...fault });

			await expect(host.publish()).rejects.toThrow(message);
			expect(methods(host)).toEqual(['checkExists', 'create', 'delete']);
			const [, create, cleanup] = host.hookCalls;
			expect(create.staticDataAfter).toEqual({});
			expect(cleanup).toMatchObject({ staticDataBefore: {}, result: true });
			expect(cleanup.error).toBeUndefined();
			// The create looked once for a subscription it may have made.
			expect(testbed.sim.log.count('subscriptions.list')).toBe(1);
			expect(testbed.sim.subscriptions.list()).toEqual([]);
			expect(host.nodeStaticData).toEqual({});

			await host.publish();
			expect(onlySubscription(testbed).id).toBe(host.nodeStaticData.subscriptionId);
		},
	);

	test('a refusal (4xx) is thrown after the one look for a subscription, which finds none', async () => {
		host = await startHost(testbed);
		testbed.sim.faults.add({ route: 'subscriptions.create', status: 400, times: 1 });
		await expect(host.publish()).rejects.toThrow('The service rejected the request as invalid');
		expect(testbed.sim.log.count('subscriptions.list')).toBe(1);
		expect(testbed.sim.subscriptions.list()).toEqual([]);
	});

	test.each([
		['answered 503', { status: 503 }],
		['answered 500', { status: 500 }],
		['its connection dropped', { drop: true }],
	])(
		'created at the service but %s: the one subscription carrying the new key is adopted and works',
		async (_name, fault) => {
			host = await startHost(testbed);
			testbed.sim.faults.add({
				route: 'subscriptions.create',
				afterHandling: true,
				times: 1,
				...fault,
			});

			await host.publish();
			// A create is never sent twice: the answer may have been lost after the service acted.
			expect(testbed.sim.log.count('subscriptions.create')).toBe(1);
			const subscription = onlySubscription(testbed);
			expect(host.nodeStaticData).toEqual({
				...ownership(testbed, host),
				subscriptionId: subscription.id,
				deliveryKeyHash: sha256Hex(keyOf(subscription)),
			});

			const { event } = testbed.sim.issueInvoice();
			expect((await event.done).map((outcome) => outcome.lastStatus)).toEqual([200]);
			await host.settled();
			expect(host.executions.map((execution) => execution.items[0].json.eventId)).toEqual([
				event.eventId,
			]);
			expect(await host.call('checkExists')).toBe(true);
		},
	);

	test.each([
		['an ID that is not a GUID', 'sub-1'],
		['a JSON ID that is not a GUID', { id: 'sub-1' }],
		['no ID', { id: '' }],
	])(
		'created, but answered 201 with %s: the subscription carrying the new key is adopted',
		async (_name, body) => {
			host = await startHost(testbed);
			testbed.sim.faults.add({
				route: 'subscriptions.create',
				afterHandling: true,
				status: 201,
				body,
				times: 1,
			});

			await host.publish();
			const subscription = onlySubscription(testbed);
			expect(host.nodeStaticData.subscriptionId).toBe(subscription.id);
			expect(testbed.sim.log.count('subscriptions.list')).toBe(1);
		},
	);

	test('answered 201 without an ID and nothing created: a clear error, nothing stored', async () => {
		host = await startHost(testbed);
		testbed.sim.faults.add({ route: 'subscriptions.create', status: 201, body: '', times: 1 });

		await expect(host.publish()).rejects.toThrow(
			'The service answered without the new subscription’s ID',
		);
		expect(testbed.sim.subscriptions.list()).toEqual([]);
		expect(host.nodeStaticData).toEqual({});
	});
});

describe('subscriptions the trigger did not create', () => {
	test('one with the same URL is never adopted nor deleted', async () => {
		host = await startHost(testbed);
		const owner = testbed.sim.defaultClient.clientId;
		const foreign = testbed.sim.subscriptions.create(
			{ notificationUrl: host.webhookUrl, eventTypes: null, description: 'someone else’s' },
			'2025-01-01T00:00:00Z',
			owner,
		);
		const foreignWithKey = testbed.sim.subscriptions.create(
			{
				notificationUrl: `${host.webhookUrl}?apiKey=someone-elses-key`,
				eventTypes: null,
				description: null,
			},
			'2025-01-01T00:00:00Z',
			owner,
		);

		expect(await host.call('checkExists')).toBe(false);
		await host.publish();
		const ids = testbed.sim.subscriptions.list().map((subscription) => subscription.id);
		expect(ids).toHaveLength(3);
		const ours = host.nodeStaticData.subscriptionId;
		expect([foreign.id, foreignWithKey.id]).not.toContain(ours);

		await host.unpublish();
		expect(testbed.sim.subscriptions.list().map((subscription) => subscription.id)).toEqual([
			foreign.id,
			foreignWithKey.id,
		]);
	});

	test('a workflow imported with another workflow’s static data leaves that workflow’s subscription alone', async () => {
		host = await startHost(testbed);
		await host.publish();
		const live = onlySubscription(testbed);
		const imported = await startHost(testbed, undefined, undefined, { workflowId: 'imported' });
		try {
			imported.importStaticData(host.workflowStaticData);
			await imported.publish();
			const own = imported.nodeStaticData.subscriptionId as string;
			expect(own).not.toBe(live.id);
			await imported.unpublish();
			expect(testbed.sim.subscriptions.list().map((subscription) => subscription.id)).toEqual([
				live.id,
			]);
		} finally {
			await imported.close();
		}
	});

	test('deliveries through a foreign subscription are refused', async () => {
		host = await startHost(testbed);
		testbed.sim.subscriptions.create(
			{
				notificationUrl: `${host.webhookUrl}?apiKey=someone-elses-key`,
				eventTypes: null,
				description: null,
			},
			'2025-01-01T00:00:00Z',
			testbed.sim.defaultClient.clientId,
		);
		await host.publish();

		const { event } = testbed.sim.issueInvoice();
		const outcomes = await event.done;
		expect(outcomes.map((outcome) => outcome.lastStatus).sort()).toEqual([200, 401]);
		await host.settled();
		expect(host.executions).toHaveLength(1);
		expect(host.executions[0].items[0].json.subscriptionId).toBe(
			host.nodeStaticData.subscriptionId,
		);
	});
});

describe('the HTTPS rule', () => {
	const expectHttpsError = (error: unknown, which: 'production' | 'test', url: string) => {
		expect(error).toBeInstanceOf(NodeOperationError);
		const { message, description } = error as NodeOperationError;
		expect(message).toBe(
			`The ${which} webhook URL must start with https://: set N8N_WEBHOOK_URL to n8n’s public https address`,
		);
		expect(description).toContain(url);
		for (const text of [
			'only over HTTPS (TLS 1.2 or later)',
			'N8N_WEBHOOK_URL',
			'N8N_PROTOCOL=https',
			'N8N_SSL_KEY',
			'N8N_SSL_CERT',
			'TLS-terminating reverse proxy',
		]) {
			expect(description).toContain(text);
		}
	};

	test('an http production URL is refused with a clear message and nothing is created', async () => {
		host = await startHost(testbed, { events: ['*'] }, 'http://n8n.example.com:5678/');
		const failure = await host.publish().then(
			() => undefined,
			(error: unknown) => error,
		);
		expectHttpsError(failure, 'production', host.webhookUrl);
		expect(host.webhookUrl.startsWith('http://n8n.example.com:5678/webhook/')).toBe(true);
		expect(testbed.sim.log.count('subscriptions.create')).toBe(0);
		expect(testbed.sim.subscriptions.list()).toEqual([]);
		expect(host.nodeStaticData).toEqual({});
	});

	test('an http test URL is refused the same way', async () => {
		host = await startHost(testbed, { events: ['*'] }, 'http://localhost:5678/');
		const failure = await host.listenForTestEvent().then(
			() => undefined,
			(error: unknown) => error,
		);
		expectHttpsError(failure, 'test', host.testWebhookUrl);
		expect(host.listening).toBe(false);
		expect(testbed.sim.log.count('subscriptions.create')).toBe(0);
		expect(testbed.sim.subscriptions.list()).toEqual([]);
	});

	test('when n8n’s address changes, the stale subscription is replaced, not duplicated', async () => {
		host = await startHost(testbed);
		await host.publish();
		const old = onlySubscription(testbed);

		host.setPublicUrl(host.listenUrl.replace('localhost', '127.0.0.1'));
		await host.publish();
		const renewed = onlySubscription(testbed);
		expect(renewed.id).not.toBe(old.id);
		expect(withoutQuery(renewed.notificationUrl)).toBe(host.webhookUrl);
		expect(host.webhookUrl.startsWith('https://127.0.0.1:')).toBe(true);

		const { event } = testbed.sim.issueInvoice();
		expect((await event.done).map((outcome) => outcome.lastStatus)).toEqual([200]);
		await host.settled();
		expect(host.executions).toHaveLength(1);
	});
});

describe('Listen for test event', () => {
	test('registers the test URL with throw-away static data and removes it after one execution', async () => {
		host = await startHost(testbed);
		await host.listenForTestEvent();

		const subscription = onlySubscription(testbed);
		expect(withoutQuery(subscription.notificationUrl)).toBe(host.testWebhookUrl);
		expect(new URL(subscription.notificationUrl).pathname).toMatch(/^\/webhook-test\//);
		expect(host.testStaticData).toEqual({
			...ownership(testbed, host),
			subscriptionId: subscription.id,
			deliveryKeyHash: sha256Hex(keyOf(subscription)),
		});
		expect(host.workflowStaticData).toEqual({});

		const { event } = testbed.sim.issueInvoice();
		expect((await event.done).map((outcome) => outcome.lastStatus)).toEqual([200]);
		await eventually(() => !host.listening);
		await host.settled();
		expect(host.executions.map((execution) => execution.mode)).toEqual(['manual']);
		expect(host.executions[0].items[0].json.eventId).toBe(event.eventId);
		expect(testbed.sim.subscriptions.list()).toEqual([]);
		expect(host.workflowStaticData).toEqual({});
	});

	test('stopping without an event deletes the test subscription', async () => {
		host = await startHost(testbed);
		await host.listenForTestEvent();
		expect(testbed.sim.subscriptions.list()).toHaveLength(1);
		await host.stopListening();
		expect(testbed.sim.subscriptions.list()).toEqual([]);
	});

	test('test and production subscriptions live side by side with separate keys', async () => {
		host = await startHost(testbed);
		await host.publish();
		await host.listenForTestEvent();
		const subscriptions = testbed.sim.subscriptions.list();
		expect(subscriptions).toHaveLength(2);
		expect(new Set(subscriptions.map(keyOf)).size).toBe(2);

		const { event } = testbed.sim.issueInvoice();
		await event.done;
		await eventually(() => !host.listening);
		await host.settled();
		expect(host.executions.map((execution) => execution.mode).sort()).toEqual([
			'manual',
			'webhook',
		]);
		const remaining = onlySubscription(testbed);
		expect(remaining.id).toBe(host.nodeStaticData.subscriptionId);
	});

	test('a failed test registration leaves nothing behind', async () => {
		host = await startHost(testbed);
		testbed.sim.faults.add({ route: 'subscriptions.create', status: 502, times: 1 });
		await expect(host.listenForTestEvent()).rejects.toThrow(
			'Bad gateway - the service failed to handle your request',
		);
		expect(host.listening).toBe(false);
		expect(testbed.sim.subscriptions.list()).toEqual([]);
	});
});

describe('the subscription list', () => {
	// 150 subscriptions of the same key come first, so that in the envelope (at most 100 a page)
	// the trigger's own is on page 2.
	test.each([
		['a bare array', { subscriptionList: 'bare array' }, [1]],
		['the page envelope', { subscriptionList: 'page envelope' }, [1, 2]],
		[
			'the page envelope without a total',
			{ subscriptionList: 'page envelope', totalItems: 'null' },
			[1, 2],
		],
	] as const)(
		'answered as %s: a lost create is adopted from any page, then found and deleted',
		async (_name, shape, pages) => {
			host = await startHost(testbed);
			const others = Array.from({ length: 150 }, (_, index) =>
				testbed.sim.subscriptions.create(
					{
						notificationUrl: `https://elsewhere.example.com/hook/${index}`,
						eventTypes: null,
						description: null,
					},
					'2026-01-01T00:00:00Z',
					testbed.sim.defaultClient.clientId,
				),
			);
			const otherIds = others.map((subscription) => subscription.id);
			testbed.sim.setListShape(shape);
			testbed.sim.faults.add({
				route: 'subscriptions.create',
				afterHandling: true,
				status: 503,
				times: 1,
			});
			const pagesAsked = () => {
				const asked = testbed.sim.log
					.entries({ route: 'subscriptions.list' })
					.map((entry) => Number(entry.query.page))
					.sort((a, b) => a - b);
				testbed.sim.log.reset();
				return asked;
			};

			await host.publish();
			expect(testbed.sim.log.count('subscriptions.create')).toBe(1);
			const ours = testbed.sim.subscriptions.list().filter((entry) => !otherIds.includes(entry.id));
			expect(ours).toHaveLength(1);
			expect(host.nodeStaticData).toEqual({
				...ownership(testbed, host),
				subscriptionId: ours[0].id,
				deliveryKeyHash: sha256Hex(keyOf(ours[0])),
			});
			expect(pagesAsked()).toEqual(pages);

			expect(await host.call('checkExists')).toBe(true);
			expect(pagesAsked()).toEqual(pages);
			await host.unpublish();
			expect(testbed.sim.subscriptions.list().map((entry) => entry.id)).toEqual(otherIds);
		},
	);

	// Which answers are unreadable, the unit tests of the subscription-list reader prove; here,
	// what checkExists does with one.
	test.each([
		['text', 'service temporarily degraded'],
		['entries without an id', [{ notificationUrl: 'https://x.example.com/' }]],
	])(
		'answered as %s: checkExists fails clearly, keeps what it stored and creates nothing',
		async (_name, body) => {
			host = await startHost(testbed);
			await host.publish();
			const stored = host.nodeStaticData;
			testbed.sim.faults.add({ route: 'subscriptions.list', status: 200, body, times: 1 });

			const failure = await host.call('checkExists').then(
				() => undefined,
				(error: Error & { description?: string }) => error,
			);
			expect(failure).toBeInstanceOf(NodeOperationError);
			expect(failure?.message).toBe(
				'The service’s subscription list has a form the node cannot read; please report this',
			);
			expect(failure?.description).toContain('docs/service-contract.md');
			expect(host.nodeStaticData).toEqual(stored);
			expect(testbed.sim.log.count('subscriptions.create')).toBe(1);
			expect(testbed.sim.log.count('subscriptions.delete')).toBe(0);
			expect(onlySubscription(testbed).id).toBe(stored.subscriptionId);
		},
	);
});

describe('a 404 to the delete', () => {
	const routeNotFound = {
		route: 'subscriptions.delete' as const,
		status: 404,
		body: { code: 'not_found', message: 'No such endpoint.', details: null },
	};

	test('that says the subscription is unknown counts as deleted', async () => {
		host = await startHost(testbed);
		await host.publish();
		testbed.sim.subscriptions.delete(onlySubscription(testbed).id);

		testbed.sim.log.reset();
		await host.unpublish();
		expect(testbed.sim.log.entries({ route: 'subscriptions.delete' })).toEqual([
			expect.objectContaining({ status: 404, errorCode: 'subscription_not_found' }),
		]);
		// The service's code settles it: no list call is needed to confirm.
		expect(testbed.sim.log.entries().map((entry) => entry.route)).toEqual(['subscriptions.delete']);
		expect(host.nodeStaticData).toEqual({});
	});

	test('of another kind, while the subscription is still listed: a clear error, and nothing is forgotten', async () => {
		host = await startHost(testbed);
		await host.publish();
		const stored = host.nodeStaticData;
		testbed.sim.faults.add(routeNotFound);

		const failure = await host.unpublish().then(
			() => undefined,
			(error: Error & { description?: string }) => error,
		);
		expect(failure).toBeInstanceOf(NodeOperationError);
		expect(failure?.message).toBe(
			`The delete did not reach subscription '${String(stored.subscriptionId)}': the service answered 404 but still lists it, so its delete address may differ from the package’s service contract`,
		);
		expect(failure?.description).toContain('docs/service-contract.md');
		expect(onlySubscription(testbed).id).toBe(stored.subscriptionId);
		expect(host.nodeStaticData).toEqual(stored);

		testbed.sim.faults.clear();
		await host.unpublish();
		expect(testbed.sim.subscriptions.list()).toEqual([]);
	});

	test('of another kind, when the list confirms the subscription is gone, counts as deleted', async () => {
		host = await startHost(testbed);
		await host.publish();
		testbed.sim.subscriptions.delete(onlySubscription(testbed).id);
		testbed.sim.faults.add(routeNotFound);

		testbed.sim.log.reset();
		await host.unpublish();
		expect(host.nodeStaticData).toEqual({});
		// The list confirms it.
		expect(testbed.sim.log.entries().map((entry) => entry.route)).toEqual([
			'subscriptions.delete',
			'subscriptions.list',
		]);
	});

	test('another API key’s subscription is not deleted: its 404 leaves it alone', async () => {
		host = await startHost(testbed);
		const other = testbed.sim.registerClient({ environment: 'production' });
		const theirs = testbed.sim.subscriptions.create(
			{ notificationUrl: host.webhookUrl, eventTypes: null, description: null },
			'2025-01-01T00:00:00Z',
			other.clientId,
		);
		await host.publish();
		expect(testbed.sim.subscriptions.list(testbed.sim.defaultClient.clientId)).toHaveLength(1);
		await host.unpublish();
		expect(testbed.sim.subscriptions.list()).toEqual([theirs]);
	});
});

describe('the Events parameter', () => {
	test.each([
		['empty', []],
		['an empty text', ''],
	])(
		'%s: publishing is refused with a clear message, before any request',
		async (_name, events) => {
			host = await startHost(testbed, { events });
			const failure = await host.publish().then(
				() => undefined,
				(error: Error & { description?: string }) => error,
			);
			expect(failure).toBeInstanceOf(NodeOperationError);
			expect(failure?.message).toBe(
				'No Events are selected: choose at least one event type, or All Events',
			);
			expect(failure?.description).toContain('All Events');
			expect(testbed.sim.log.count('subscriptions.create')).toBe(0);
			expect(testbed.sim.subscriptions.list()).toEqual([]);
		},
	);
});
