/**
 * Replacing the API key as the README's "Expiry" section says, step by step, with a published
 * trigger: events issued before, during and after every step each start the workflow exactly
 * once, publishing and unpublishing never fail, and no subscription outlives the old key.
 */
import { randomUUID } from 'node:crypto';

import type { INodeCredentialsDetails } from 'n8n-workflow';

import {
	DELIVERY_RETRIES_END_WITHIN_MS,
	NEW_SUBSCRIPTION_RECEIVES_EVENTS_WITHIN_MS,
} from '../../../nodes/InvoicingAssets/transport/contract';

import { useN8nLog } from '../../harness/n8n-log';
import { expectNoSecret } from '../../harness/secrets';
import { credentialFor, enterKeyAsEditor, secretsOf, type Testbed } from '../../harness/testbed';
import type { TriggerHost } from '../../harness/webhooks';
import type { ClientRecord, EmittedEvent } from '../../simulator';
import { eventually, resetSimulator, startHost, startTriggerTestbed } from './helpers';

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
	testbed.sim.deliveries.setOptions({ retrySchedule: RETRIES, activationMs: 0 });
});

afterEach(async () => {
	jest.restoreAllMocks();
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
	enterKeyAsEditor(testbed.harness, credential, key);
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
	await eventually(() => sim.deliveries.entries({ eventId: events[3].eventId }).length > 0);
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
	// The old key's subscription delivered the event of the gap: its tries met n8n's 404 until the
	// publish routed the URL again (how many depends on how fast the publish began), then one 200.
	const gapEvent = events[3];
	const gapTries = sim.deliveries
		.entries({ eventId: gapEvent.eventId })
		.map(
			(attempt) =>
				`${attempt.subscriptionId === oldSubscription.id ? 'old' : 'new'} ${attempt.status}`,
		);
	expect(gapTries.length).toBeGreaterThanOrEqual(2);
	expect(gapTries).toEqual([...gapTries.slice(0, -1).map(() => 'old 404'), 'old 200']);

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

/** Steps 2 and 3 of the README: the new key entered and saved, then unpublish and publish. */
async function replaceKey(trigger: TriggerHost, credential: INodeCredentialsDetails) {
	const newKey = testbed.sim.registerClient({ environment: 'production' });
	enterKey(credential, newKey);
	await trigger.unpublish();
	await trigger.publish();
	return newKey;
}

function runsOf(trigger: TriggerHost, eventId: string): number {
	return runsPerEvent(trigger).get(eventId) ?? 0;
}

test('after the replacement, the old key’s copies of events well after the new subscription’s creation start nothing, even without the memory of repeats', async () => {
	const { sim } = testbed;
	const oldKey = sim.registerClient({ environment: 'production' });
	const { host: trigger, credential } = await publishedOn(oldKey, { ignoreRepeated: false });
	await replaceKey(trigger, credential);
	// Events that certainly reached the new subscription too (contract.ts).
	sim.clock.advance(NEW_SUBSCRIPTION_RECEIVES_EVENTS_WITHIN_MS + 2000);

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

test('an event the service sends only through the old subscription, because it learns of the new one late, is not lost', async () => {
	// The contract allows the service to fan an event out to a new subscription only from a while
	// after its creation on; until then the old key's copy is the only one.
	const { sim } = testbed;
	const oldKey = sim.registerClient({ environment: 'production' });
	const { host: trigger, credential } = await publishedOn(oldKey, { ignoreRepeated: false });
	sim.clock.advance(61_000);
	sim.deliveries.setOptions({ activationMs: 60_000 });
	const newKey = await replaceKey(trigger, credential);
	sim.clock.advance(2000);

	const { event } = sim.issueInvoice();
	await settle(trigger);

	const owner = (id: string) => (sim.subscriptions.ownerOf(id) === newKey.clientId ? 'new' : 'old');
	expect(
		sim.deliveries
			.entries({ eventId: event.eventId })
			.map((attempt) => `${owner(attempt.subscriptionId)} ${attempt.status}`),
	).toEqual(['old 200']);
	expect(runsOf(trigger, event.eventId)).toBe(1);
});

test('the service’s clock ahead of n8n’s: the event of the gap still starts the workflow', async () => {
	// The replacement's time is the service's, from the create answer's Date header: n8n's clock
	// never stands in for it.
	const { sim } = testbed;
	const oldKey = sim.registerClient({ environment: 'production' });
	const { host: trigger, credential } = await publishedOn(oldKey);
	// Ahead by more than the margin of contract.ts: n8n's time would have the gap event look later
	// than the new subscription's creation, and its old copy dropped.
	sim.clock.advance(NEW_SUBSCRIPTION_RECEIVES_EVENTS_WITHIN_MS + 30_000);
	enterKey(credential, sim.registerClient({ environment: 'production' }));
	await trigger.unpublish();
	// Its retry comes once the publish is done (a retry during it is let in anyway).
	sim.deliveries.setOptions({ retrySchedule: [4000] });
	const gap = sim.issueInvoice().event;
	await eventually(() => sim.deliveries.entries({ eventId: gap.eventId }).length > 0);
	await trigger.publish();
	await settle(trigger);

	expect(sim.deliveries.entries({ eventId: gap.eventId }).at(-1)?.status).toBe(200);
	expect(runsOf(trigger, gap.eventId)).toBe(1);
});

test('an event that occurs while the publish is still making the new subscription starts the workflow once and is not lost', async () => {
	// The harness routes the URL from before checkExists, as n8n does: the new subscription's first
	// tries meet the static data of before (401), the old one's copy is let in.
	const { sim } = testbed;
	const oldKey = sim.registerClient({ environment: 'production' });
	const { host: trigger, credential } = await publishedOn(oldKey);
	enterKey(credential, sim.registerClient({ environment: 'production' }));
	await trigger.unpublish();
	const [old] = sim.subscriptions.list();
	// The create's answer is held until the event's delivery to the new subscription was refused.
	const held = sim.faults.add({
		route: 'subscriptions.create',
		hold: true,
		afterHandling: true,
		times: 1,
	});
	const publishing = trigger.publish();
	await eventually(() => sim.subscriptions.list().length === 2);
	const created = sim.subscriptions.list().find((subscription) => subscription.id !== old.id);
	const during = sim.issueInvoice().event;
	const refusedAt = (subscriptionId?: string) =>
		sim.deliveries.entries({ eventId: during.eventId, subscriptionId }).map((a) => a.status);
	await eventually(() => refusedAt(created?.id).includes(401));
	sim.faults.remove(held.id);
	await publishing;
	await settle(trigger);

	expect(refusedAt()).toContain(401);
	expect(runsOf(trigger, during.eventId)).toBe(1);
});

test(`a day after the replacement the old delivery key is refused, whatever the delivery says of its time`, async () => {
	// A key replaced because its webhook URL leaked: the old URL must stop working. For a day it is
	// let in, for the service's retries of what fell between unpublish and publish.
	const { sim } = testbed;
	const oldKey = sim.registerClient({ environment: 'production' });
	const { host: trigger, credential } = await publishedOn(oldKey);
	const [oldSubscription] = sim.subscriptions.list(oldKey.clientId);
	await replaceKey(trigger, credential);
	sim.deleteClient(oldKey.clientId);
	const forged = (eventId: string) =>
		trigger.post(oldSubscription.notificationUrl, {
			eventId,
			eventType: 'invoice.issued',
			occurredAt: null,
			subscriptionId: oldSubscription.id,
			data: { invoiceNumber: 'INV-FORGED', totalAmount: 1_000_000 },
		});

	const withinTheDay = randomUUID();
	expect((await forged(withinTheDay)).status).toBe(200);
	const realNow = Date.now.bind(Date);
	jest
		.spyOn(Date, 'now')
		.mockImplementation(() => realNow() + DELIVERY_RETRIES_END_WITHIN_MS + 1000);
	const afterTheDay = randomUUID();
	const answer = await forged(afterTheDay);
	await trigger.settled();

	expect({ status: answer.status, runs: runsOf(trigger, afterTheDay) }).toEqual({
		status: 401,
		runs: 0,
	});
});

test('a workflow left out of unpublish and publish says so in n8n’s log while its subscription still delivers', async () => {
	// Else events would stop silently: the old key still lives, and once it is deleted nothing can tell.
	const { sim } = testbed;
	const oldKey = sim.registerClient({ environment: 'production' });
	const { host: trigger, credential } = await publishedOn(oldKey);
	const [subscription] = sim.subscriptions.list(oldKey.clientId);
	enterKey(credential, sim.registerClient({ environment: 'production' }));
	const events = [sim.issueInvoice().event, sim.issueInvoice().event];
	await settle(trigger);

	expectEachOnce(trigger, events);
	const warnings = n8nLog
		.ofThisTest()
		.split('\n')
		.filter((line) => line.includes(`subscription ${subscription.id} was created with`));
	expect(warnings).toHaveLength(1);
	expect(warnings[0]).toContain(
		`the API key with client ID '${oldKey.clientId}', which the credential no longer holds. Unpublish this workflow and publish it again`,
	);
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
