import type { INodeCredentialsDetails } from 'n8n-workflow';

import { expectNoSecret } from '../../harness/secrets';
import { credentialFor, secretsOf, type Testbed } from '../../harness/testbed';
import { TriggerHost } from '../../harness/webhooks';
import { resetSimulator, startTriggerTestbed } from './helpers';

let testbed: Testbed;
const hosts: TriggerHost[] = [];

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
	options: { events?: string[]; workflowId?: string; credential?: INodeCredentialsDetails } = {},
) {
	const host = await TriggerHost.start({
		harness: testbed.harness,
		credential: options.credential ?? testbed.harness.addCredential(credentialFor(testbed.sim)),
		caDir: testbed.sim.caDir,
		parameters: { events: options.events ?? ['*'] },
		workflowId: options.workflowId,
	});
	hosts.push(host);
	return host;
}

const ownerOf = (id: string) => testbed.sim.subscriptions.ownerOf(id);

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

test('after the API key is replaced, the old key’s subscription is named in the error, never forgotten; the way out the error gives works', async () => {
	const { sim, harness } = testbed;
	const oldKey = sim.registerClient({ environment: 'production' });
	const newKey = sim.registerClient({ environment: 'production' });
	const credential = harness.addCredential(credentialFor(sim, oldKey));
	const host = await startHost({ credential });
	await host.publish();
	const [old] = sim.subscriptions.list();
	expect(ownerOf(old.id)).toBe(oldKey.clientId);

	const useKey = (key: typeof oldKey) =>
		harness.credentials.edit(credential.id ?? '', {
			clientId: key.clientId,
			clientSecret: key.clientSecret,
			accessToken: '',
		});
	useKey(newKey);
	const unpublished = await host.unpublish().then(
		() => undefined,
		(error: Error) => error,
	);
	expect(unpublished?.message).toContain(`Subscription '${old.id}'`);
	expect(host.nodeStaticData.subscriptionId).toBe(old.id);

	const published = await host.publish().then(
		() => undefined,
		(error: Error & { description?: string }) => error,
	);
	expect(published?.message).toBe(
		`Subscription '${old.id}' of this trigger was created with the API key with client ID '${oldKey.clientId}' (the credential now has client ID '${newKey.clientId}'), which the current credential cannot reach or delete`,
	);
	expect(published?.description).toContain('put that key back into the credential');
	expectNoSecret(
		published,
		[...secretsOf(testbed), oldKey.clientSecret, newKey.clientSecret],
		'the error',
	);
	expect(sim.subscriptions.has(old.id)).toBe(true);

	// The way out the error describes: the old key back, publish and unpublish, then the new key.
	useKey(oldKey);
	await host.publish();
	await host.unpublish();
	expect(sim.subscriptions.has(old.id)).toBe(false);
	useKey(newKey);
	await host.publish();
	const [replacement] = sim.subscriptions.list();
	expect(sim.subscriptions.list()).toHaveLength(1);
	expect(ownerOf(replacement.id)).toBe(newKey.clientId);
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
