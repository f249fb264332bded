import type { INodeCredentialsDetails } from 'n8n-workflow';

import { credentialFor, secretsOf, startTestbed, type Testbed } from '../harness/testbed';
import { expectNoSecret } from '../harness/secrets';

const MINUTE = 60_000;
const listSubscriptions = { resource: 'subscription', operation: 'getAll', returnAll: true };

let testbed: Testbed;

beforeAll(async () => {
	testbed = await startTestbed({ invoices: 10, assets: 5 });
});

afterAll(async () => {
	await testbed.close();
});

beforeEach(() => {
	testbed.sim.log.reset();
	testbed.sim.faults.clear();
});

function newCredential(overrides = {}): INodeCredentialsDetails {
	return testbed.harness.addCredential(credentialFor(testbed.sim, undefined, overrides));
}

async function callService(credential: INodeCredentialsDetails) {
	return await testbed.harness.runNode({ parameters: listSubscriptions, credential });
}

function expectNoSecretIn(value: unknown, extraSecrets: string[] = []) {
	expectNoSecret(value, [...secretsOf(testbed), ...extraSecrets], 'the result or error');
}

test('a token is stored and reused by later executions, and renewed once an hour: three simulated hours of runs every ten minutes cost three token exchanges', async () => {
	const credential = newCredential();
	for (let minute = 0; minute < 180; minute += 10) {
		const { error } = await callService(credential);
		expect(error).toBeUndefined();
		testbed.sim.clock.advance(10 * MINUTE);
	}
	expect(testbed.sim.log.tokensIssued()).toBe(3);
	expect(testbed.sim.log.count('token')).toBe(3);
	expect(testbed.sim.log.count('subscriptions.list', { status: 200 })).toBe(18);
});

describe('credential errors', () => {
	test('a Scope without /.default is refused before any request', async () => {
		const credential = newCredential({ scope: 'api://invoicing-assets' });
		const { error } = await callService(credential);

		expect(error?.message).toBe('The Scope must end with /.default');
		expect(error?.description).toContain('/.default');
		expect(testbed.sim.log.count()).toBe(0);
	});

	test('a wrong client secret says the client ID or secret was rejected, without the secret', async () => {
		const wrongSecret = ['not', 'the', 'real', 'one'].join('-');
		const credential = newCredential({ clientSecret: wrongSecret });
		const { error } = await callService(credential);

		expect(error?.message).toBe('The identity service rejected the client ID or secret');
		expect(error?.description).toContain('Client Secret');
		expect(testbed.sim.log.count('token', { status: 401 })).toBe(1);
		expect(testbed.sim.log.count('subscriptions.list')).toBe(0);
		expectNoSecretIn(error, [wrongSecret]);
		expectNoSecretIn(error?.message, [wrongSecret]);
	});

	test('a token response without a token is a clear error', async () => {
		testbed.sim.faults.add({
			route: 'token',
			status: 200,
			body: { tokenType: 'Bearer' },
			times: 1,
		});
		const credential = newCredential();
		const { error } = await callService(credential);

		expect(error?.message).toBe('The identity service answered without an access token');
		expect(error?.description).toContain('accessToken');
		expect(testbed.sim.log.count('subscriptions.list')).toBe(0);
	});

	test('a key whose expiry date has passed is refused before any request, with how to replace it', async () => {
		const credential = newCredential({ keyExpiresOn: '2026-01-31T00:00:00' });
		const { error } = await callService(credential);

		expect(error?.message).toBe('The API key expired on 2026-01-31');
		expect(error?.description).toContain('cannot be revived');
		expect(error?.description).toContain('cannot be extended');
		expect(error?.description).toContain('identity portal');
		expect(testbed.sim.log.count()).toBe(0);
	});

	test('a key the identity service reports as expired gets the same explanation', async () => {
		const client = testbed.sim.registerClient({
			environment: 'production',
			keyExpiresAt: new Date(testbed.sim.clock.now().getTime() + 24 * 60 * MINUTE),
		});
		const credential = testbed.harness.addCredential(credentialFor(testbed.sim, client));
		expect((await callService(credential)).error).toBeUndefined();

		testbed.sim.clock.advance(25 * 60 * MINUTE);
		const { error } = await callService(credential);

		expect(error?.message).toBe('The API key expired');
		expect(error?.description).toContain('cannot be revived');
		expect(error?.description).toContain('replacement key');
		expectNoSecretIn(error, [client.clientSecret]);
	});

	test('an http Base URL is refused before any request', async () => {
		const credential = newCredential({
			baseUrl: testbed.sim.serviceUrl.replace('https:', 'http:'),
		});
		const { error } = await callService(credential);

		expect(error?.message).toBe('The Base URL must start with https://');
		expect(error?.description).toContain('Every request carries the access token to this address');
		expect(testbed.sim.log.count()).toBe(0);
	});

	test('an http Identity Service URL is refused before the secret is sent anywhere', async () => {
		const credential = newCredential({
			identityUrl: testbed.sim.identityUrl.replace('https:', 'http:'),
		});
		const { error } = await callService(credential);

		expect(error?.message).toBe('The Identity Service URL must start with https://');
		expect(error?.description).toContain('The client secret is sent to this address');
		expect(testbed.sim.log.count()).toBe(0);
	});

	test('a redirect from the identity service is not followed, so the secret goes nowhere else', async () => {
		testbed.sim.faults.add({
			route: 'token',
			status: 307,
			headers: { location: `${testbed.sim.serviceUrl}/elsewhere` },
			times: 1,
		});
		const { error } = await callService(newCredential());

		expect(error?.message).toBe('The identity service refused the token request (HTTP 307)');
		expect(testbed.sim.log.count('token')).toBe(1);
		expect(testbed.sim.log.count('unknown')).toBe(0);
		expectNoSecretIn(error);
	});
});

describe('identity-service faults: the token request is retried like a read', () => {
	test.each([
		['503 twice', { status: 503, times: 2 }, 3],
		['a 429 with Retry-After', { status: 429, retryAfter: 1, times: 1 }, 2],
		['a lost connection', { drop: true, times: 1 }, 2],
		['a 502 after the token was issued', { status: 502, afterHandling: true, times: 1 }, 2],
	])('%s: the run succeeds', async (_, fault, tokenRequests) => {
		testbed.sim.faults.add({ route: 'token', ...fault });
		const { error } = await callService(newCredential());

		expect(error).toBeUndefined();
		expect(testbed.sim.log.count('token')).toBe(tokenRequests);
		expect(testbed.sim.log.count('subscriptions.list', { status: 200 })).toBe(1);
	});

	// How long a Retry-After is waited for is proven on a simulated clock (test/unit/transport/retry.test.ts).
	test('a 429 whose Retry-After asks for longer than a retry may wait is not retried: the header reaches the token request', async () => {
		testbed.sim.faults.add({ route: 'token', status: 429, retryAfter: 3600, times: 1 });
		const { error } = await callService(newCredential());

		expect(error?.message).toBe('The identity service refused the token request (HTTP 429)');
		expect(testbed.sim.log.count('token')).toBe(1);
		expect(testbed.sim.log.count('subscriptions.list')).toBe(0);
	});

	test('a refused client ID or secret is not retried, even after a fault', async () => {
		testbed.sim.faults.add({ route: 'token', status: 503, times: 1 });
		const { error } = await callService(newCredential({ clientSecret: 'not-the-secret-at-all' }));

		expect(error?.message).toBe('The identity service rejected the client ID or secret');
		expect(testbed.sim.log.count('token', { status: 503 })).toBe(1);
		expect(testbed.sim.log.count('token', { status: 401 })).toBe(1);
	});
});
