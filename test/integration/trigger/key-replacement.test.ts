/**
 * Replacing the API key as the README's "Expiry" section says, step by step, with a published
 * trigger: events issued before, during and after every step each start the workflow exactly
 * once, publishing and unpublishing never fail, and no subscription outlives the old key.
 */
import type { INodeCredentialsDetails } from 'n8n-workflow';

import { useN8nLog } from '../../harness/n8n-log';
import { expectNoSecret } from '../../harness/secrets';
import { credentialFor, secretsOf, type Testbed } from '../../harness/testbed';
import type { TriggerHost } from '../../harness/webhooks';
import type { ClientRecord, EmittedEvent } from '../../simulator';
import { resetSimulator, startHost, startTriggerTestbed } from './helpers';

/** The service retries long enough for a user to unpublish and publish again. */
const RETRIES = [300, 600, 1200, 2400];

let testbed: Testbed;
let host: TriggerHost | undefined;
const n8nLog = useN8nLog();

beforeAll(async () => {
	testbed = await startTriggerTestbed();
});

afterAll(async () => {
	await testbed.close();
});

beforeEach(() => {
	testbed.sim.deliveries.setOptions({ retrySchedule: RETRIES });
});

afterEach(async () => {
	await host?.close();
	host = undefined;
	await resetSimulator(testbed);
});

/** A published trigger on a credential of its own, on key `key`. */
async function publishedOn(key: ClientRecord, options: { ignoreRepeated?: boolean } = {}) {
	const credential = testbed.harness.addCredential(credentialFor(testbed.sim, key));
	host = await startHost(
		testbed,
		{ events: ['*'], options: { ignoreRepeatedDeliveries: options.ignoreRepeated ?? true } },
		undefined,
		{ credential },
	);
	await host.publish();
	return { host, credential };
}

/** Step 2 of the README: the new key entered in the credential and saved (the hidden token stays). */
function enterKey(credential: INodeCredentialsDetails, key: ClientRecord) {
	testbed.harness.credentials.edit(credential.id ?? '', {
		clientId: key.clientId,
		clientSecret: key.clientSecret,
	});
}

/** How many times each event started the workflow, by event ID. */
function runsPerEvent(trigger: TriggerHost): Map<string, number> {
	const runs = new Map<string, number>();
	for (const execution of trigger.executions) {
		if (execution.kind !== 'production') continue;
		const eventId = String(execution.items[0]?.json.eventId);
		runs.set(eventId, (runs.get(eventId) ?? 0) + 1);
	}
	return runs;
}

async function settle(trigger: TriggerHost) {
	await testbed.sim.waitForDeliveries(30_000);
	await trigger.settled();
}

function expectEachOnce(trigger: TriggerHost, events: EmittedEvent[]) {
	const runs = runsPerEvent(trigger);
	expect(events.map((event) => runs.get(event.eventId) ?? 0)).toEqual(events.map(() => 1));
	expect(runs.size).toBe(events.length);
}

test('the README’s procedure: every event starts the workflow once, nothing fails, nothing of the old key is left', async () => {
	const { sim } = testbed;
	const oldKey = sim.registerClient({ environment: 'production' });
	const { host: trigger, credential } = await publishedOn(oldKey);
	const [oldSubscription] = sim.subscriptions.list(oldKey.clientId);
	const events: EmittedEvent[] = [];
	const issue = () => events.push(sim.issueInvoice().event);

	issue();
	// 1. A new key in the same portal tab.
	const newKey = sim.registerClient({ environment: 'production' });
	issue();
	// 2. The new key entered in the credential and saved.
	enterKey(credential, newKey);
	issue();
	await settle(trigger);
	// 3. Unpublish, then publish again.
	await trigger.unpublish();
	issue();
	await trigger.publish();
	issue();
	await settle(trigger);
	// 4. Once the service has retried what it could not deliver meanwhile, the old key is deleted.
	const ended = sim.deleteClient(oldKey.clientId);
	issue();
	await settle(trigger);

	expectEachOnce(trigger, events);
	expect(ended.map((subscription) => subscription.id)).toEqual([oldSubscription.id]);
	const [newSubscription] = sim.subscriptions.list();
	expect(sim.subscriptions.list()).toHaveLength(1);
	expect(sim.subscriptions.ownerOf(newSubscription.id)).toBe(newKey.clientId);
	expect(trigger.nodeStaticData.subscriptionId).toBe(newSubscription.id);
	// The old key's subscription delivered the event of the gap (its first tries met n8n's 404).
	const gapEvent = events[3];
	expect(
		sim.deliveries
			.entries({ eventId: gapEvent.eventId })
			.map((attempt) => [attempt.subscriptionId, attempt.status]),
	).toEqual([
		[oldSubscription.id, 404],
		[oldSubscription.id, 200],
	]);

	// Unpublishing and publishing work as ever.
	await trigger.unpublish();
	expect(sim.subscriptions.list()).toEqual([]);
	await trigger.publish();
	expect(sim.subscriptions.list(newKey.clientId)).toHaveLength(1);
	await trigger.unpublish();
	expect(sim.subscriptions.list()).toEqual([]);

	const log = n8nLog.ofThisTest();
	expect(log).toContain(
		`subscription ${oldSubscription.id} was created with the API key with client ID '${oldKey.clientId}', which the credential no longer holds`,
	);
	expectNoSecret(
		log,
		[...secretsOf(testbed), oldKey.clientSecret, newKey.clientSecret],
		'n8n’s log',
	);
});

test('after the replacement, the old key’s copies of newer events start nothing, even without the memory of repeats', async () => {
	const { sim } = testbed;
	const oldKey = sim.registerClient({ environment: 'production' });
	const { host: trigger, credential } = await publishedOn(oldKey, { ignoreRepeated: false });
	const newKey = sim.registerClient({ environment: 'production' });
	enterKey(credential, newKey);
	await trigger.unpublish();
	await trigger.publish();
	// Events of a later second than the new subscription's creation.
	sim.clock.advance(2000);

	const events = [sim.issueInvoice().event, sim.issueInvoice().event];
	await settle(trigger);

	// Both subscriptions delivered each event, and each was answered 200.
	for (const event of events) {
		expect(
			sim.deliveries.entries({ eventId: event.eventId }).map((attempt) => attempt.status),
		).toEqual([200, 200]);
	}
	expectEachOnce(trigger, events);
});

test('the old key deleted before unpublishing: unpublish and publish still work, and the new subscription delivers', async () => {
	const { sim } = testbed;
	const oldKey = sim.registerClient({ environment: 'production' });
	const { host: trigger, credential } = await publishedOn(oldKey);
	const newKey = sim.registerClient({ environment: 'production' });
	enterKey(credential, newKey);
	sim.deleteClient(oldKey.clientId);

	await trigger.unpublish();
	await trigger.publish();
	const { event } = sim.issueInvoice();
	await settle(trigger);

	expectEachOnce(trigger, [event]);
	expect(
		sim.subscriptions.list().map((subscription) => sim.subscriptions.ownerOf(subscription.id)),
	).toEqual([newKey.clientId]);
	await trigger.unpublish();
	expect(sim.subscriptions.list()).toEqual([]);
});

test('publishing in another environment leaves the old environment’s subscription to end with its key, and subscribes in the new one', async () => {
	const { sim } = testbed;
	const { host: trigger, credential } = await publishedOn(sim.defaultClient);
	const [production] = sim.subscriptions.list();
	testbed.harness.credentials.edit(credential.id ?? '', {
		environment: 'sandbox',
		baseUrl: sim.sandboxServiceUrl,
		clientId: sim.defaultSandboxClient.clientId,
		clientSecret: sim.defaultSandboxClient.clientSecret,
	});

	await trigger.unpublish();
	await trigger.publish();

	expect(sim.subscriptions.has(production.id)).toBe(true);
	expect(sim.subscriptions.list(sim.defaultSandboxClient.clientId)).toHaveLength(1);
	expect(n8nLog.ofThisTest()).toContain(
		`subscription ${production.id} was created with the API key with client ID '${sim.defaultClient.clientId}', which the credential no longer holds`,
	);
});
