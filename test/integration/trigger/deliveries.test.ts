import { randomBytes, randomUUID } from 'node:crypto';

import { InvoicingAssetsTrigger } from '../../../nodes/InvoicingAssets/InvoicingAssetsTrigger.node';
import { expectNoSecret } from '../../harness/secrets';
import type { Testbed } from '../../harness/testbed';
import type { TriggerHost } from '../../harness/webhooks';
import {
	keyOf,
	onlySubscription,
	resetSimulator,
	sha256Hex,
	startHost,
	startTriggerTestbed,
} from './helpers';

let testbed: Testbed;
let host: TriggerHost;

beforeAll(async () => {
	testbed = await startTriggerTestbed();
});

afterEach(async () => {
	await host?.close();
	await resetSimulator(testbed);
});

afterAll(async () => {
	await testbed.close();
});

const TRIGGER = 'Invoicing & Assets Trigger';

/** A well-formed event for this host's subscription. */
function eventFor(subscriptionId: string, eventType = 'invoice.issued') {
	return {
		eventId: randomUUID(),
		eventType,
		occurredAt: '2025-01-02T03:04:05Z',
		subscriptionId,
		data: { invoiceNumber: 'INV-TEST-1' },
	};
}

/** Publishes and returns the subscription, its key, and the production URL with `?apiKey=<key>`. */
async function publishWithKey() {
	await host.publish();
	const subscription = onlySubscription(testbed);
	const key = keyOf(subscription);
	return { subscription, key, url: `${host.webhookUrl}?apiKey=${encodeURIComponent(key)}` };
}

describe('a delivery with the right key', () => {
	test('starts exactly one execution whose item is the event, answered with a JSON acknowledgement', async () => {
		host = await startHost(testbed);
		const { key } = await publishWithKey();

		const { event } = testbed.sim.issueInvoice();
		const outcomes = await event.done;
		expect(outcomes).toEqual([
			expect.objectContaining({ result: 'delivered', attempts: 1, lastStatus: 200 }),
		]);
		await host.settled();

		expect(host.executions).toHaveLength(1);
		const [execution] = host.executions;
		expect(execution.mode).toBe('webhook');
		const delivered = event.deliveries[0].event;
		expect(execution.items.map((item) => item.json)).toEqual([delivered]);
		const run = await execution.done;
		expect(run?.data.resultData.error).toBeUndefined();
		expect(run?.data.resultData.runData[TRIGGER][0].data?.main[0]?.map((i) => i.json)).toEqual([
			delivered,
		]);
		expectNoSecret(run?.data, [key], 'the execution data');
		expect(JSON.stringify(execution.items).includes('apiKey')).toBe(false);

		const [answer] = host.requests;
		expect(answer).toMatchObject({ kind: 'production', status: 200, executed: true });
		expect(JSON.parse(answer.body)).toEqual({ received: true });
		expect(answer.body).not.toContain('firstEntryJson');
		expect(answer.contentType).toMatch(/^application\/json/);
	});

	test('the event is passed as delivered, fields the contract does not know included', async () => {
		host = await startHost(testbed);
		const { subscription, url } = await publishWithKey();
		const event = { ...eventFor(subscription.id), schemaVersion: 2 };
		expect((await host.post(url, event)).status).toBe(200);
		expect(host.executions[0].items[0].json).toEqual(event);
	});
});

describe('deliveries without the right key', () => {
	const cases: Array<[string, (key: string) => string]> = [
		['no key', () => ''],
		['an empty key', () => '?apiKey='],
		['a wrong key', () => `?apiKey=${randomBytes(32).toString('base64url')}`],
		[
			'the key with one character changed',
			(key) => `?apiKey=${key.slice(0, 10)}${key[10] === 'A' ? 'B' : 'A'}${key.slice(11)}`,
		],
		['a prefix of the key', (key) => `?apiKey=${key.slice(0, -1)}`],
		['the key with a character added', (key) => `?apiKey=${key}A`],
		['the key in upper case', (key) => `?apiKey=${key.toUpperCase()}`],
		['the key under apikey', (key) => `?apikey=${key}`],
		['the key under api_key', (key) => `?api_key=${key}`],
		['the key under APIKEY', (key) => `?APIKEY=${key}`],
		['the key given twice', (key) => `?apiKey=${key}&apiKey=${key}`],
		['the key and a wrong one', (key) => `?apiKey=${key}&apiKey=wrong`],
		['the key as apiKey[]', (key) => `?apiKey[]=${key}`],
		['the key as apiKey[x]', (key) => `?apiKey[x]=${key}`],
		["the key's SHA-256 (what n8n stores)", (key) => `?apiKey=${sha256Hex(key)}`],
	];

	test.each(cases)('%s: 401, no execution', async (_name, query) => {
		host = await startHost(testbed);
		const { subscription, key } = await publishWithKey();
		const event = eventFor(subscription.id);

		const answer = await host.post(`${host.webhookUrl}${query(key)}`, event);
		expect(answer.status).toBe(401);
		expect(answer.json).toEqual({
			error: 'unauthorized',
			message: 'The delivery key is missing or not valid.',
		});
		expectNoSecret(answer.text, [key], 'the answer');
		await host.settled();
		expect(host.executions).toEqual([]);
	});

	test('the key in a header or in the body is not accepted', async () => {
		host = await startHost(testbed);
		const { subscription, key } = await publishWithKey();
		const inHeader = await host.post(host.webhookUrl, eventFor(subscription.id), {
			'x-api-key': key,
			authorization: `Bearer ${key}`,
		});
		const inBody = await host.post(host.webhookUrl, { ...eventFor(subscription.id), apiKey: key });
		expect([inHeader.status, inBody.status]).toEqual([401, 401]);
		expect(host.executions).toEqual([]);
	});

	test('the key is checked before the body', async () => {
		host = await startHost(testbed);
		await publishWithKey();
		const answer = await host.post(`${host.webhookUrl}?apiKey=wrong`, 'not json', {
			'content-type': 'text/plain',
		});
		expect(answer.status).toBe(401);
	});

	test('once the subscription is replaced, the old key is refused and the new one accepted', async () => {
		host = await startHost(testbed);
		const old = await publishWithKey();
		testbed.sim.subscriptions.delete(old.subscription.id);
		await host.publish();
		const renewed = onlySubscription(testbed);

		expect((await host.post(old.url, eventFor(renewed.id))).status).toBe(401);
		const url = `${host.webhookUrl}?apiKey=${encodeURIComponent(keyOf(renewed))}`;
		expect((await host.post(url, eventFor(renewed.id))).status).toBe(200);
		expect(host.executions).toHaveLength(1);
	});
});

describe('bodies that are not events', () => {
	test.each([
		['text that is not JSON', 'this is not json', 'text/plain', 'invalid_body'],
		['an empty body', '', 'application/json', 'invalid_body'],
		[
			'a JSON object that is not an event',
			'{"hello":"world"}',
			'application/json',
			'invalid_event',
		],
		['a JSON array', '[]', 'application/json', 'invalid_event'],
		['a JSON string', '"invoice.issued"', 'application/json', 'invalid_event'],
	])('%s: 400, no execution', async (_name, body, contentType, error) => {
		host = await startHost(testbed);
		const { url } = await publishWithKey();
		const answer = await host.post(url, body, { 'content-type': contentType });
		expect(answer.status).toBe(400);
		expect(answer.json.error).toBe(error);
		await host.settled();
		expect(host.executions).toEqual([]);
	});

	test('invalid JSON sent as application/json is refused by n8n itself (422), no execution', async () => {
		host = await startHost(testbed);
		const { url } = await publishWithKey();
		const answer = await host.post(url, '{"eventId":', { 'content-type': 'application/json' });
		expect(answer.status).toBe(422);
		expect(host.executions).toEqual([]);
	});

	test('a JSON event sent as text/plain is still read', async () => {
		host = await startHost(testbed);
		const { subscription, url } = await publishWithKey();
		const event = eventFor(subscription.id);
		const answer = await host.post(url, JSON.stringify(event), { 'content-type': 'text/plain' });
		expect(answer.status).toBe(200);
		expect(host.executions[0].items[0].json).toEqual(event);
	});
});

describe('events whose optional fields are empty (the spec: null, never omitted)', () => {
	test.each([
		['data is null', { data: null }],
		['occurredAt and subscriptionId are null', { occurredAt: null, subscriptionId: null }],
		['every optional field is null', { occurredAt: null, subscriptionId: null, data: null }],
		[
			'the optional fields are left out',
			{ occurredAt: undefined, subscriptionId: undefined, data: undefined },
		],
	])('%s: one execution with the event as delivered', async (_name, change) => {
		host = await startHost(testbed);
		const { subscription, url } = await publishWithKey();
		const event = JSON.parse(JSON.stringify({ ...eventFor(subscription.id), ...change }));

		const answer = await host.post(url, event);
		expect([answer.status, answer.json]).toEqual([200, { received: true }]);
		await host.settled();
		expect(host.executions.map((execution) => execution.items.map((item) => item.json))).toEqual([
			[event],
		]);
		const run = await host.executions[0].done;
		expect(run?.data.resultData.error).toBeUndefined();
	});
});

describe('repeated deliveries', () => {
	test('a re-delivered eventId starts one execution when Ignore Repeated Deliveries is on (default)', async () => {
		host = await startHost(testbed);
		await publishWithKey();
		testbed.sim.deliveries.setOptions({ duplicate: true });

		const { event } = testbed.sim.issueInvoice();
		const outcomes = await event.done;
		expect(outcomes.map((outcome) => [outcome.copy, outcome.lastStatus])).toEqual([
			[1, 200],
			[2, 200],
		]);
		await host.settled();
		expect(host.executions).toHaveLength(1);
		expect(host.requests.map((request) => [request.status, request.executed])).toEqual([
			[200, true],
			[200, false],
		]);
		expect(JSON.parse(host.requests[1].body)).toEqual({ received: true });
		// The memory of seen events is not static data: webhook() writes none.
		expect(Object.keys(host.nodeStaticData).sort()).toEqual([
			'baseUrl',
			'clientId',
			'deliveryKeyHash',
			'subscriptionId',
			'workflowId',
		]);
	});

	test('with the option off, a re-delivered event runs twice and no IDs are kept', async () => {
		host = await startHost(testbed, {
			events: ['*'],
			options: { ignoreRepeatedDeliveries: false },
		});
		await publishWithKey();
		testbed.sim.deliveries.setOptions({ duplicate: true });

		const { event } = testbed.sim.issueInvoice();
		await event.done;
		await host.settled();
		expect(host.executions).toHaveLength(2);
		expect(host.executions.map((execution) => execution.items[0].json.eventId)).toEqual([
			event.eventId,
			event.eventId,
		]);
	});

	test('copies of one event arriving at the same moment start exactly one execution', async () => {
		host = await startHost(testbed);
		const { subscription, url } = await publishWithKey();
		const event = eventFor(subscription.id);

		host.gatherRequests(5);
		const answers = await Promise.all(Array.from({ length: 5 }, () => host.post(url, event)));
		expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
		await host.settled();
		expect(host.executions.map((execution) => execution.items[0].json.eventId)).toEqual([
			event.eventId,
		]);
		expect(host.requests.filter((request) => request.executed)).toHaveLength(1);
	});

	test('the same copies all run with Ignore Repeated Deliveries off (they really reach the trigger)', async () => {
		host = await startHost(testbed, {
			events: ['*'],
			options: { ignoreRepeatedDeliveries: false },
		});
		const { subscription, url } = await publishWithKey();
		const event = eventFor(subscription.id);

		host.gatherRequests(5);
		await Promise.all(Array.from({ length: 5 }, () => host.post(url, event)));
		await host.settled();
		expect(host.executions).toHaveLength(5);
	});

	test('repeats are recognised across requests, and different events all run', async () => {
		host = await startHost(testbed);
		const { subscription, url } = await publishWithKey();
		const first = eventFor(subscription.id);
		const second = eventFor(subscription.id);
		for (const event of [first, second, first, second, first]) {
			expect((await host.post(url, event)).status).toBe(200);
		}
		expect(host.executions.map((execution) => execution.items[0].json.eventId)).toEqual([
			first.eventId,
			second.eventId,
		]);
	});

	test('an event whose execution n8n failed to start is let in again when the service retries it', async () => {
		host = await startHost(testbed);
		await publishWithKey();
		host.failExecutionStarts = 1;

		const { event } = testbed.sim.issueInvoice();
		const [outcome] = await event.done;
		await host.settled();

		expect(outcome).toMatchObject({ result: 'delivered', attempts: 2, lastStatus: 200 });
		expect(host.requests.map((request) => [request.status, request.executed])).toEqual([
			[500, false],
			[200, true],
		]);
		expect(host.executions.map((execution) => execution.items[0].json.eventId)).toEqual([
			event.eventId,
		]);
	});

	test('the memory is per trigger: the same event ID delivered to another trigger runs there too', async () => {
		host = await startHost(testbed);
		const other = await startHost(testbed);
		try {
			await host.publish();
			await other.publish();
			const { event } = testbed.sim.issueInvoice();
			expect((await event.done).map((outcome) => outcome.lastStatus)).toEqual([200, 200]);
			await host.settled();
			await other.settled();
			expect([host.executions.length, other.executions.length]).toEqual([1, 1]);
		} finally {
			await other.close();
		}
	});
});

describe('event filtering', () => {
	test('the subscription asks the service for the chosen types only', async () => {
		host = await startHost(testbed, { events: ['invoice.paid'] });
		await publishWithKey();
		const issued = testbed.sim.issueInvoice().event;
		const paid = testbed.sim.emitEvent('invoice.paid', { invoiceNumber: 'INV-1' });
		expect(issued.deliveries).toEqual([]);
		await paid.done;
		await host.settled();
		expect(host.executions.map((execution) => execution.items[0].json.eventType)).toEqual([
			'invoice.paid',
		]);
	});

	test('an event of a type not selected is acknowledged (200) and starts nothing', async () => {
		host = await startHost(testbed);
		await publishWithKey();
		host.setParameters({ events: ['invoice.paid'] });

		const { event } = testbed.sim.issueInvoice();
		expect((await event.done).map((outcome) => outcome.lastStatus)).toEqual([200]);
		await host.settled();
		expect(host.executions).toEqual([]);
		expect(JSON.parse(host.requests[0].body)).toEqual({ received: true });

		const paid = testbed.sim.emitEvent('invoice.paid', { invoiceNumber: 'INV-2' });
		await paid.done;
		await host.settled();
		expect(host.executions).toHaveLength(1);
	});

	test('an event type the package does not know runs only with All Events', async () => {
		host = await startHost(testbed);
		const { subscription, url } = await publishWithKey();
		expect((await host.post(url, eventFor(subscription.id, 'invoice.disputed'))).status).toBe(200);
		expect(host.executions).toHaveLength(1);

		host.setParameters({ events: ['invoice.issued'] });
		expect((await host.post(url, eventFor(subscription.id, 'invoice.disputed'))).status).toBe(200);
		expect(host.executions).toHaveLength(1);
	});
});

describe('Invoice Overdue', () => {
	/** The value behind an entry of the trigger's Events, as the user picks it by name. */
	function eventNamed(name: string): string {
		const events = new InvoicingAssetsTrigger().description.properties.find(
			(property) => property.name === 'events',
		);
		const option = events?.options?.find((entry) => entry.name === name);
		if (!option || !('value' in option)) throw new Error(`The trigger offers no "${name}"`);
		return String(option.value);
	}

	test('chosen under Events, the subscription asks for invoice.overdue, and an invoice marked overdue starts the workflow once with its event', async () => {
		host = await startHost(testbed, { events: [eventNamed('Invoice Overdue')] });
		const { key } = await publishWithKey();
		expect(onlySubscription(testbed).eventTypes).toEqual(['invoice.overdue']);

		const { invoice: issued, event: issuedEvent } = testbed.sim.issueInvoice();
		expect(issuedEvent.deliveries).toEqual([]);
		const { invoice, event } = testbed.sim.markInvoiceOverdue(issued.invoiceNumber);
		expect((await event.done).map((outcome) => outcome.lastStatus)).toEqual([200]);
		await host.settled();

		expect(host.executions.map((execution) => execution.items.map((item) => item.json))).toEqual([
			[event.deliveries[0].event],
		]);
		expect(host.executions[0].items[0].json).toMatchObject({
			eventType: 'invoice.overdue',
			data: { invoiceNumber: invoice.invoiceNumber, status: 'overdue' },
		});
		const run = await host.executions[0].done;
		expect(run?.data.resultData.error).toBeUndefined();
		expectNoSecret(run?.data, [key], 'the execution data');
	});

	test('with Invoice Paid as well, an invoice paid after it was overdue starts the workflow twice: invoice.overdue, then invoice.paid', async () => {
		host = await startHost(testbed, {
			events: [eventNamed('Invoice Overdue'), eventNamed('Invoice Paid')],
		});
		await publishWithKey();
		expect(onlySubscription(testbed).eventTypes).toEqual(['invoice.overdue', 'invoice.paid']);

		const { invoice } = testbed.sim.issueInvoice();
		await testbed.sim.markInvoiceOverdue(invoice.invoiceNumber).event.done;
		await testbed.sim.payInvoice(invoice.invoiceNumber).event.done;
		await host.settled();
		expect(
			host.executions.map((execution) => [
				execution.items[0].json.eventType,
				(execution.items[0].json.data as { invoiceNumber: string }).invoiceNumber,
			]),
		).toEqual([
			['invoice.overdue', invoice.invoiceNumber],
			['invoice.paid', invoice.invoiceNumber],
		]);
	});

	test('with All Events, an invoice marked overdue starts the workflow; with other events only, it starts nothing', async () => {
		host = await startHost(testbed);
		await publishWithKey();
		const first = testbed.sim.issueInvoice();
		await first.event.done;
		await testbed.sim.markInvoiceOverdue(first.invoice.invoiceNumber).event.done;
		await host.settled();
		expect(host.executions.map((execution) => execution.items[0].json.eventType)).toEqual([
			'invoice.issued',
			'invoice.overdue',
		]);

		host.setParameters({ events: ['invoice.issued', 'invoice.paid', 'invoice.cancelled'] });
		const second = testbed.sim.issueInvoice();
		await second.event.done;
		await testbed.sim.markInvoiceOverdue(second.invoice.invoiceNumber).event.done;
		await host.settled();
		expect(host.executions.map((execution) => execution.items[0].json.eventType)).toEqual([
			'invoice.issued',
			'invoice.overdue',
			'invoice.issued',
		]);
	});
});
