/**
 * A subscription belongs to the API key that created it and lives as long as that key: what the
 * spec implies (a key stops working on its expiry date, a deleted key is gone) and the contract
 * assumes (tokens and deliveries stop with the key).
 */
import { randomBytes } from 'node:crypto';
import type { Agent } from 'undici';

import { paths, tokenRequestForm } from '../../../nodes/InvoicingAssets/transport/contract';
import { withDeliveryKey } from '../../../nodes/InvoicingAssets/transport/notificationUrl';
import { startSimulator, type ClientRecord, type Simulator } from '../../simulator';
import {
	call,
	caOf,
	createAgent,
	fetchToken,
	requestToken,
	startReceiver,
	type Receiver,
} from './helpers';

let sim: Simulator;
let agent: Agent;
let receiver: Receiver;

beforeAll(async () => {
	sim = await startSimulator({ invoices: 5, assets: 5, delivery: { retrySchedule: [200, 200] } });
	agent = createAgent(sim);
	receiver = await startReceiver(caOf(sim));
});

afterEach(async () => {
	await sim.waitForDeliveries(10_000);
	for (const subscription of sim.subscriptions.list()) sim.subscriptions.delete(subscription.id);
	receiver.reset();
});

afterAll(async () => {
	await receiver.close();
	await agent.close();
	await sim.close();
});

async function subscribe(key: ClientRecord, name: string): Promise<string> {
	const token = await fetchToken(agent, sim, key);
	const created = await call(agent, `${sim.serviceUrl}${paths.subscriptions}`, {
		method: 'POST',
		token,
		json: {
			notificationUrl: withDeliveryKey(`${receiver.url}/${name}`, randomBytes(18).toString('hex')),
			eventTypes: null,
			description: null,
		},
	});
	expect(created.status).toBe(201);
	return created.json as string;
}

const receivedBy = (name: string) =>
	receiver.received.filter(
		(delivery) => new URL(delivery.url, receiver.url).pathname === `/${name}`,
	);

test('a deleted key: its tokens are refused, the token endpoint no longer knows it, its subscriptions end', async () => {
	const old = sim.registerClient({ environment: 'production' });
	const replacement = sim.registerClient({ environment: 'production' });
	const oldToken = await fetchToken(agent, sim, old);
	const oldSubscription = await subscribe(old, 'old');
	const newSubscription = await subscribe(replacement, 'new');

	expect(sim.deleteClient(old.clientId).map((subscription) => subscription.id)).toEqual([
		oldSubscription,
	]);

	const refused = await call(agent, `${sim.serviceUrl}${paths.subscriptions}`, { token: oldToken });
	expect([refused.status, refused.json.code, refused.json.details.reason]).toEqual([
		401,
		'unauthorized',
		'key_deleted',
	]);
	const tokenRequest = await requestToken(agent, sim, {
		...tokenRequestForm(old.clientId, old.clientSecret, old.scope),
	});
	expect([tokenRequest.status, tokenRequest.json.error]).toEqual([401, 'invalid_client']);
	expect(sim.subscriptions.has(oldSubscription)).toBe(false);
	expect(sim.subscriptions.has(newSubscription)).toBe(true);

	const { event } = sim.issueInvoice();
	const outcomes = await event.done;
	expect(outcomes.map((outcome) => [outcome.subscriptionId, outcome.result])).toEqual([
		[newSubscription, 'delivered'],
	]);
	expect(receivedBy('old')).toHaveLength(0);
	expect(() => sim.deleteClient(old.clientId)).toThrow(/not registered/);
});

test('an expired key’s subscriptions stay but receive nothing', async () => {
	const expiring = sim.registerClient({
		environment: 'production',
		keyExpiresAt: new Date(sim.clock.now().getTime() + 60_000),
	});
	const expired = await subscribe(expiring, 'expired');
	const lasting = await subscribe(sim.registerClient({ environment: 'production' }), 'lasting');
	sim.clock.advance(61_000);

	const outcomes = await sim.issueInvoice().event.done;
	expect(outcomes.map((outcome) => outcome.subscriptionId)).toEqual([lasting]);
	expect(sim.subscriptions.has(expired)).toBe(true);
	expect(receivedBy('expired')).toHaveLength(0);
});
