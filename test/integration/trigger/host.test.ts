import type { IWebhookFunctions } from 'n8n-workflow';

import { receiveDelivery } from '../../../nodes/InvoicingAssets/trigger/delivery';
import type { Testbed } from '../../harness/testbed';
import type { TriggerHost } from '../../harness/webhooks';
import { keyOf, onlySubscription, resetSimulator, startHost, startTriggerTestbed } from './helpers';

/**
 * The host reproduces what n8n 2.41 does with static data changed inside webhook(): saved when
 * the request starts no execution, lost when it starts one (seen against a real n8n: a static-data
 * memory of event IDs never survived to the next delivery). The trigger must not rely on it.
 */
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

test('static data written in webhook() is saved only when no execution starts', async () => {
	host = await startHost(testbed, { events: ['invoice.issued'] });
	await host.publish();
	const subscription = onlySubscription(testbed);
	const url = `${host.webhookUrl}?apiKey=${encodeURIComponent(keyOf(subscription))}`;
	const trigger = testbed.harness.nodeTypes.getByNameAndVersion(host.node.type);
	const original = receiveDelivery;
	jest.spyOn(trigger, 'webhook').mockImplementation(async function (this: IWebhookFunctions) {
		const body = this.getBodyData();
		this.getWorkflowStaticData('node')[`probe-${String(body.eventType)}`] = true;
		return await original.call(this);
	});
	const event = (eventType: string) => ({
		eventId: `${eventType}-1`,
		eventType,
		occurredAt: '2025-01-02T03:04:05Z',
		subscriptionId: subscription.id,
		data: {},
	});

	expect((await host.post(url, event('invoice.paid'))).status).toBe(200);
	expect(host.executions).toHaveLength(0);
	expect(host.nodeStaticData['probe-invoice.paid']).toBe(true);

	expect((await host.post(url, event('invoice.issued'))).status).toBe(200);
	expect(host.executions).toHaveLength(1);
	expect(host.nodeStaticData['probe-invoice.issued']).toBeUndefined();
});

test('a production request after unpublish is not routed (404), as in n8n', async () => {
	host = await startHost(testbed);
	await host.publish();
	const url = `${host.webhookUrl}?apiKey=${encodeURIComponent(keyOf(onlySubscription(testbed)))}`;
	await host.unpublish();
	expect((await host.post(url, {})).status).toBe(404);
});
