import type { INodeCredentialsDetails } from 'n8n-workflow';

import { TEST_SUBSCRIPTION_MAX_AGE_MS } from '../../../nodes/InvoicingAssets/trigger/subscription';
import { useN8nLog } from '../../harness/n8n-log';
import { credentialFor, type Testbed } from '../../harness/testbed';
import { TriggerHost } from '../../harness/webhooks';
import { toServiceTimestamp } from '../../simulator/contract';
import { resetSimulator, startTriggerTestbed } from './helpers';

let testbed: Testbed;
const hosts: TriggerHost[] = [];

const n8nLog = useN8nLog();

beforeAll(async () => {
	testbed = await startTriggerTestbed();
});

afterAll(async () => {
	await testbed.close();
});

afterEach(async () => {
	testbed.sim.setCreateCommitDelay(undefined);
	for (const host of hosts.splice(0)) await host.close();
	await resetSimulator(testbed);
});

async function startHost(
	options: {
		events?: string[];
		workflowId?: string;
		webhookId?: string;
		publicUrl?: string;
		credential?: INodeCredentialsDetails;
	} = {},
) {
	const host = await TriggerHost.start({
		harness: testbed.harness,
		credential: options.credential ?? testbed.harness.addCredential(credentialFor(testbed.sim)),
		caDir: testbed.sim.caDir,
		parameters: { events: options.events ?? ['*'] },
		workflowId: options.workflowId,
		webhookId: options.webhookId,
		publicUrl: options.publicUrl,
	});
	hosts.push(host);
	return host;
}

/** Makes a subscription look `ms` older at the service, as if it had been made then. */
function age(id: string, ms: number) {
	const { subscriptions } = testbed.sim;
	const subscription = subscriptions.get(id);
	const owner = subscriptions.ownerOf(id);
	if (!subscription || !owner) throw new Error(`No subscription ${id}`);
	subscriptions.insert(
		{ ...subscription, createdAt: toServiceTimestamp(new Date(Date.now() - ms)) },
		owner,
	);
}

const ids = () => testbed.sim.subscriptions.list().map((subscription) => subscription.id);

test('a create whose answer is lost, and which the service commits a moment later, is found and kept', async () => {
	const { sim } = testbed;
	sim.setCreateCommitDelay(1500);
	sim.faults.add({ route: 'subscriptions.create', drop: true, afterHandling: true, times: 1 });
	const host = await startHost();

	await host.publish();

	const subscriptions = sim.subscriptions.list();
	expect(subscriptions).toHaveLength(1);
	expect(host.nodeStaticData.subscriptionId).toBe(subscriptions[0].id);
	expect(sim.log.count('subscriptions.create')).toBe(1);
});

test('a workflow imported with another workflow’s static data leaves that workflow’s subscription alone', async () => {
	const { sim } = testbed;
	const original = await startHost();
	await original.publish();
	const [live] = sim.subscriptions.list();

	const imported = await startHost({ workflowId: 'imported-workflow' });
	imported.importStaticData(original.workflowStaticData);
	await imported.publish();

	expect(sim.subscriptions.has(live.id)).toBe(true);
	const own = imported.nodeStaticData.subscriptionId as string;
	expect(own).not.toBe(live.id);
	expect(sim.subscriptions.has(own)).toBe(true);

	await imported.unpublish();
	expect(sim.subscriptions.has(own)).toBe(false);
	expect(sim.subscriptions.has(live.id)).toBe(true);
	expect(sim.log.count('subscriptions.delete')).toBe(1);
});

test('after a failed delete, the next publish does not keep a subscription for events no longer selected', async () => {
	const { sim } = testbed;
	const host = await startHost({ events: ['invoice.issued'] });
	await host.publish();
	const [first] = sim.subscriptions.list();

	sim.faults.add({ route: 'subscriptions.delete', status: 500 });
	await host.unpublish().catch(() => undefined);
	sim.faults.clear();
	expect(sim.subscriptions.has(first.id)).toBe(true);

	host.setParameters({ events: ['invoice.paid'] });
	await host.publish();

	const subscriptions = sim.subscriptions.list();
	expect(subscriptions).toHaveLength(1);
	expect(subscriptions[0].eventTypes).toEqual(['invoice.paid']);
	expect(host.nodeStaticData.subscriptionId).toBe(subscriptions[0].id);
});

describe('subscriptions the trigger left behind at its webhook URL', () => {
	test('a create the service commits after the trigger stopped looking is deleted at the next publish', async () => {
		const { sim } = testbed;
		const store = sim.subscriptions;
		const commit = store.create.bind(store);
		// The service takes the create, loses its answer, and commits it only later: here, once the
		// trigger has given up looking for it.
		let committing: Parameters<typeof commit> | undefined;
		jest.spyOn(store, 'create').mockImplementationOnce((...args) => {
			committing = args;
			return { ...args[0], id: args[3] ?? '', createdAt: args[1] };
		});
		sim.faults.add({ route: 'subscriptions.create', drop: true, afterHandling: true, times: 1 });
		const host = await startHost();
		await expect(host.publish()).rejects.toThrow(
			'should one show up later, publishing the workflow again deletes any subscription this trigger left at its webhook URL',
		);
		expect(committing).toBeDefined();
		const late = commit(...(committing as Parameters<typeof commit>));

		await host.publish();
		expect(sim.subscriptions.has(late.id)).toBe(false);
		expect(ids()).toEqual([host.nodeStaticData.subscriptionId]);
	});

	test('one that shows up only after the workflow was unpublished is deleted with the unpublish', async () => {
		const { sim } = testbed;
		const host = await startHost();
		await host.publish();
		// A copy the service made of the create and never showed until now.
		const [live] = sim.subscriptions.list();
		const copy = sim.subscriptions.create(
			{ notificationUrl: live.notificationUrl, eventTypes: null, description: null },
			live.createdAt,
			sim.defaultClient.clientId,
		);

		await host.unpublish();
		expect(sim.subscriptions.has(copy.id)).toBe(false);
		expect(ids()).toEqual([]);
	});

	test('a test registration n8n lost (a restart while listening) is deleted once older than a listen can last', async () => {
		const { sim } = testbed;
		const host = await startHost();
		await host.listenForTestEvent();
		const [lost] = sim.subscriptions.list();
		host.loseTestRegistration();

		// Still young: it may be a listen in progress.
		await host.publish();
		expect(sim.subscriptions.has(lost.id)).toBe(true);
		await host.unpublish();
		expect(ids()).toEqual([lost.id]);

		age(lost.id, TEST_SUBSCRIPTION_MAX_AGE_MS + 60_000);
		await host.publish();
		expect(sim.subscriptions.has(lost.id)).toBe(false);
		expect(ids()).toEqual([host.nodeStaticData.subscriptionId]);
		expect(n8nLog.ofThisTest()).toContain(
			`deleted subscription ${lost.id}, which it had left behind at its webhook URL`,
		);
	});

	test('nothing of a user, another workflow or another n8n is touched, however old', async () => {
		const { sim, harness } = testbed;
		const credential = harness.addCredential(credentialFor(sim));
		const host = await startHost({ credential });
		// The same workflow and credential on another n8n (another public address).
		const elsewhere = await startHost({
			credential,
			webhookId: host.node.webhookId,
			publicUrl: host.listenUrl.replace('localhost', '127.0.0.1'),
		});
		await elsewhere.publish();
		// A workflow copied in this n8n: its own workflow and webhook IDs.
		const copy = await startHost({ credential, workflowId: 'copied-workflow' });
		await copy.publish();
		// A user's own subscription of the trigger's URLs, made with the action node.
		const own = await harness.runNode({
			credential,
			parameters: {
				resource: 'subscription',
				operation: 'create',
				notificationUrl: host.webhookUrl,
				eventTypes: ['*'],
				additionalFields: { deliveryKey: 'a-key-of-the-users-own' },
			},
		});
		expect(own.error).toBeUndefined();
		const others = ids();
		expect(others).toHaveLength(3);
		for (const id of others) age(id, TEST_SUBSCRIPTION_MAX_AGE_MS + 60_000);

		await host.publish();
		await host.unpublish();
		await host.publish();
		await host.unpublish();

		expect(ids()).toEqual(others);
	});
});

test('the same workflow on another n8n under another path of the same origin keeps its production subscription', async () => {
	// Two n8n behind one proxy, e.g. https://tools.example.com/ and https://tools.example.com/staging/
	// (N8N_PATH), the staging one restored from a copy of the production database: same workflow
	// ID, webhook ID and credential. Only the endpoint segment may differ between "our" two URLs.
	const { sim } = testbed;
	const credential = testbed.harness.addCredential(credentialFor(sim));
	const host = await startHost({ credential });
	const staging = await startHost({
		credential,
		workflowId: host.workflowId,
		webhookId: host.node.webhookId,
		publicUrl: `${host.listenUrl}staging/`,
	});
	await staging.publish();
	const [theirs] = sim.subscriptions.list();
	age(theirs.id, TEST_SUBSCRIPTION_MAX_AGE_MS + 60_000);

	await host.publish();

	expect(n8nLog.ofThisTest()).not.toContain(`deleted subscription ${theirs.id}`);
	expect(sim.subscriptions.has(theirs.id)).toBe(true);
	expect(sim.subscriptions.list()).toHaveLength(2);
});

test('after the key’s secret is rotated (same client ID), a test registration lost before is still recognised as its own and deleted', async () => {
	const { sim, harness } = testbed;
	const key = sim.registerClient({ environment: 'production' });
	const credential = harness.addCredential(credentialFor(sim, key));
	const host = await startHost({ credential });
	await host.listenForTestEvent();
	const [lost] = sim.subscriptions.list();
	host.loseTestRegistration();
	const rotated = sim.updateClientSecret(key.clientId);
	harness.credentials.edit(credential.id ?? '', { clientSecret: rotated.clientSecret });
	age(lost.id, TEST_SUBSCRIPTION_MAX_AGE_MS + 60_000);

	await host.publish();

	expect(sim.subscriptions.has(lost.id)).toBe(false);
	expect(sim.subscriptions.list()).toHaveLength(1);
});
