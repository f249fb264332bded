/* eslint-disable @n8n/community-nodes/no-restricted-globals */
/**
 * A token belongs to the key (and addresses) it was obtained for. The credential is changed here
 * as n8n's editor saves it: the fields shown change and the hidden token is kept.
 */
import type { INodeCredentialsDetails } from 'n8n-workflow';

import { CREDENTIAL_TYPE } from '../harness/node-types';
import { addSubscriptionListProbe } from '../harness/probe';
import { expectNoSecret } from '../harness/secrets';
import {
	credentialFor,
	enterKeyAsEditor,
	secretsOf,
	startTestbed,
	type Testbed,
} from '../harness/testbed';
import type { ClientRecord } from '../simulator';

const listSubscriptions = { resource: 'subscription', operation: 'getAll', returnAll: true };
const listInvoices = { resource: 'invoice', operation: 'getAll', returnAll: true, filters: {} };

let testbed: Testbed;
/** Runs a node that authenticates through n8n alone, as the HTTP Request node does. */
let runProbe: ReturnType<typeof addSubscriptionListProbe>;

beforeAll(async () => {
	testbed = await startTestbed({ invoices: 1000, assets: 5 });
	runProbe = addSubscriptionListProbe(testbed.harness, CREDENTIAL_TYPE);
});

afterAll(async () => {
	await testbed.close();
});

beforeEach(() => {
	testbed.sim.log.reset();
	testbed.sim.faults.clear();
});

/** A credential on key `old` that has been used, so that it stores a token of that key. */
async function usedCredential(old: ClientRecord): Promise<INodeCredentialsDetails> {
	const credential = testbed.harness.addCredential(credentialFor(testbed.sim, old));
	const { error } = await testbed.harness.runNode({ parameters: listSubscriptions, credential });
	expect(error).toBeUndefined();
	testbed.sim.log.reset();
	return credential;
}

/** The new key entered as in the editor: Client ID and Client Secret change, the hidden token stays. */
function enterKey(credential: INodeCredentialsDetails, key: ClientRecord) {
	const before = testbed.harness.credentials.stored(credential.id ?? '').accessToken;
	enterKeyAsEditor(testbed.harness, credential, key);
	expect(testbed.harness.credentials.stored(credential.id ?? '').accessToken).toBe(before);
}

/** The client each service request (not token request) since the last reset was authenticated as. */
function callersOfService(): Array<string | null> {
	return testbed.sim.log
		.entries()
		.filter((entry) => entry.route !== 'token')
		.map((entry) => entry.clientId);
}

test('after a new key is saved, the next request gets a token of the new key before it is sent; the old token is never sent', async () => {
	const old = testbed.sim.registerClient({ environment: 'production' });
	const replacement = testbed.sim.registerClient({ environment: 'production' });
	const credential = await usedCredential(old);
	enterKey(credential, replacement);

	const { error } = await testbed.harness.runNode({ parameters: listSubscriptions, credential });

	expect(error).toBeUndefined();
	expect(testbed.sim.log.entries({ route: 'token' }).map((entry) => entry.clientId)).toEqual([
		replacement.clientId,
	]);
	// No 401 round trip either: the old token was not even tried.
	expect(callersOfService()).toEqual([replacement.clientId]);
	expect(testbed.sim.log.count(undefined, { status: 401 })).toBe(0);
});

test('after the environment and Base URL change, the production token never goes to the sandbox address', async () => {
	const sandbox = testbed.sim.defaultSandboxClient;
	const credential = await usedCredential(testbed.sim.defaultClient);
	testbed.harness.credentials.edit(credential.id ?? '', {
		environment: 'sandbox',
		baseUrl: testbed.sim.sandboxServiceUrl,
		clientId: sandbox.clientId,
		clientSecret: sandbox.clientSecret,
	});

	const { error } = await testbed.harness.runNode({ parameters: listSubscriptions, credential });

	expect(error).toBeUndefined();
	const served = testbed.sim.log.entries().filter((entry) => entry.route !== 'token');
	expect(served.map((entry) => [entry.environment, entry.clientId, entry.status])).toEqual([
		['sandbox', sandbox.clientId, 200],
	]);
});

test('a node that authenticates through n8n alone (as the HTTP Request node) sends no old token: the service refuses, n8n renews with the new key', async () => {
	const old = testbed.sim.registerClient({ environment: 'production' });
	const replacement = testbed.sim.registerClient({ environment: 'production' });
	const credential = await usedCredential(old);
	enterKey(credential, replacement);

	const task = await runProbe(credential);
	expect(task.error).toBeUndefined();
	expect(task.data?.main[0]?.map((item) => item.json)).toEqual([{ subscriptions: 0 }]);
	// The first try carries no usable token (no client), the second the new key's.
	expect(callersOfService()).toEqual([null, replacement.clientId]);
	expect(testbed.sim.log.entries({ route: 'token' }).map((entry) => entry.clientId)).toEqual([
		replacement.clientId,
	]);
	expectNoSecret(
		testbed.sim.log.entries(),
		[...secretsOf(testbed), old.clientSecret, replacement.clientSecret],
		'the request log',
	);
});

test('a Return All during which a new key is saved and the token then expires renews for the new key, and the new key stays stored', async () => {
	const old = testbed.sim.registerClient({ environment: 'production' });
	const replacement = testbed.sim.registerClient({ environment: 'production' });
	const credential = await usedCredential(old);
	testbed.sim.faults.add({ route: 'invoices.list', latencyMs: 100 });
	const running = testbed.harness.runNode({ parameters: listInvoices, credential });
	while (testbed.sim.log.count('invoices.list', { status: 200 }) < 2) {
		await new Promise((resolve) => setTimeout(resolve, 2));
	}
	enterKey(credential, replacement);
	testbed.sim.clock.advance(61 * 60_000);
	const result = await running;

	expect(result.error).toBeUndefined();
	expect(result.items.map((item) => item.json.invoiceNumber)).toEqual(
		testbed.sim.data.invoices().map((invoice) => invoice.invoiceNumber),
	);
	expect(testbed.sim.log.entries({ route: 'token' }).map((entry) => entry.clientId)).toEqual([
		replacement.clientId,
	]);
	// n8n 1.x stores the whole credential object it renews with: the renewal reads it as stored.
	const stored = testbed.harness.credentials.stored(credential.id ?? '');
	// Compared as booleans, so that a failure does not print the secrets.
	expect([stored.clientId, stored.clientSecret === replacement.clientSecret]).toEqual([
		replacement.clientId,
		true,
	]);
	expect(callersOfService().at(-1)).toBe(replacement.clientId);
});

test('a Return All whose credential is switched to the sandbox midway fails, naming the change, and reads nothing from the sandbox', async () => {
	const { sim, harness } = testbed;
	const credential = await usedCredential(sim.defaultClient);
	sim.faults.add({ route: 'invoices.list', latencyMs: 100 });
	const running = harness.runNode({ parameters: listInvoices, credential });
	while (sim.log.count('invoices.list', { status: 200 }) < 2) {
		await new Promise((resolve) => setTimeout(resolve, 2));
	}
	harness.credentials.edit(credential.id ?? '', {
		environment: 'sandbox',
		baseUrl: sim.sandboxServiceUrl,
		clientId: sim.defaultSandboxClient.clientId,
		clientSecret: sim.defaultSandboxClient.clientSecret,
	});
	// The run's production token reaches its 60 minutes: the renewal reads the credential anew.
	sim.clock.advance(61 * 60_000);
	const result = await running;

	expect(result.error?.message).toBe(
		'The credential’s Environment or Base URL changed while this node ran',
	);
	expect(
		sim.log.entries({ route: 'invoices.list' }).filter((entry) => entry.environment === 'sandbox'),
	).toEqual([]);
});
