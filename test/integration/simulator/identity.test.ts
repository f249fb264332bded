import type { Agent } from 'undici';

import {
	EXPIRED_KEY_ERROR,
	INVALID_SCOPE_ERROR,
	paths,
	tokenRequestForm,
} from '../../../nodes/InvoicingAssets/transport/contract';
import { ACCESS_TOKEN_LIFETIME_SECONDS } from '../../simulator/contract';
import { readIdentityError } from '../../../nodes/InvoicingAssets/transport/responses';
import { startSimulator, type ClientRecord, type Simulator } from '../../simulator';
import { expectNoSecret } from '../../harness/secrets';
import { call, createAgent, fetchToken, requestToken } from './helpers';

const MINUTE = 60 * 1000;

let sim: Simulator;
let agent: Agent;

beforeAll(async () => {
	sim = await startSimulator({ invoices: 30, assets: 10 });
	agent = createAgent(sim);
});

afterAll(async () => {
	await agent.close();
	await sim.close();
});

const form = (client: Pick<ClientRecord, 'clientId' | 'clientSecret' | 'scope'>) => ({
	...tokenRequestForm(client.clientId, client.clientSecret, client.scope),
});

const listInvoices = (token: string | undefined, baseUrl = sim.serviceUrl) =>
	call(agent, `${baseUrl}${paths.invoices}?pageSize=1`, { token });

describe('token endpoint', () => {
	test('issues an opaque bearer token for 60 minutes', async () => {
		const response = await requestToken(agent, sim, form(sim.defaultClient));
		expect(response.status).toBe(200);
		expect(response.headers['content-type']).toBe('application/json');
		expect(response.headers['cache-control']).toBe('no-store');
		expect(response.json).toEqual({
			accessToken: expect.any(String),
			tokenType: 'Bearer',
			expiresIn: ACCESS_TOKEN_LIFETIME_SECONDS,
		});
		expect(response.json.accessToken.length).toBeGreaterThanOrEqual(32);
		const again = await requestToken(agent, sim, form(sim.defaultClient));
		expect(again.json.accessToken === response.json.accessToken).toBe(false);
	});

	test('answers 401 invalid_client for an unknown client or a wrong secret, without echoing it', async () => {
		const unknown = await requestToken(agent, sim, {
			...form(sim.defaultClient),
			client_id: 'no-such-client',
		});
		expect(unknown.status).toBe(401);
		expect(readIdentityError(unknown.text)?.error).toBe('invalid_client');
		expectNoSecret(
			unknown.text,
			['no-such-client', sim.defaultClient.clientSecret],
			'the answer to an unknown client',
		);

		const wrongSecret = `${sim.defaultClient.clientSecret}-wrong`;
		const wrong = await requestToken(agent, sim, {
			...form(sim.defaultClient),
			client_secret: wrongSecret,
		});
		expect(wrong.status).toBe(401);
		expect(wrong.json.error).toBe('invalid_client');
		expect(wrong.json.error_description).toContain('client secret');
		expectNoSecret(
			wrong.text,
			[wrongSecret, sim.defaultClient.clientSecret],
			'the answer to a wrong secret',
		);
	});

	test('answers 400 invalid_scope for a scope the client does not have', async () => {
		const response = await requestToken(agent, sim, {
			...form(sim.defaultClient),
			scope: 'api://something-else/.default',
		});
		expect(response.status).toBe(400);
		expect(response.json.error).toBe(INVALID_SCOPE_ERROR);
	});

	test('a key past its expiry date gets key_expired, and its tokens stop working', async () => {
		const client = sim.registerClient({
			environment: 'production',
			keyExpiresAt: new Date(sim.clock.now().getTime() + 30 * MINUTE),
		});
		const token = await fetchToken(agent, sim, client);
		expect((await listInvoices(token)).status).toBe(200);

		// The token (60 minutes) outlives the key (30 minutes): the key's expiry ends it.
		sim.clock.advance(31 * MINUTE);
		const response = await requestToken(agent, sim, form(client));
		expect(response.status).toBe(400);
		expect(response.json.error).toBe(EXPIRED_KEY_ERROR);
		expect(response.json.error_description).toMatch(/^The API key expired on \d{4}-\d{2}-\d{2}/);

		const refused = await listInvoices(token);
		expect(refused.status).toBe(401);
		expect(refused.json.details).toEqual({ reason: 'key_expired' });
		// Other keys keep working.
		expect((await listInvoices(await fetchToken(agent, sim))).status).toBe(200);
	});
});

describe('bearer authentication', () => {
	test('a service call without a token is 401 with the error shape', async () => {
		const response = await listInvoices(undefined);
		expect(response.status).toBe(401);
		expect(Object.keys(response.json).sort()).toEqual(['code', 'details', 'message']);
		expect(response.json.code).toBe('unauthorized');
		expect(response.json.details).toEqual({ reason: 'missing_token' });
		expect(response.headers['www-authenticate']).toContain('Bearer');
	});

	test('a made-up token is refused', async () => {
		const response = await listInvoices('not-a-real-token');
		expect(response.status).toBe(401);
		expect(response.json.details).toEqual({ reason: 'unknown_token' });
		expectNoSecret(response.text, ['not-a-real-token'], 'the answer to a made-up token');
	});

	test('every service route requires a token', async () => {
		const urls: Array<[string, string]> = [
			['POST', paths.subscriptions],
			['GET', paths.subscriptions],
			['DELETE', paths.subscription('00000000-0000-4000-8000-000000000000')],
			['GET', paths.invoices],
			['GET', paths.invoice('INV-0000001')],
			['GET', paths.assets],
			['GET', paths.asset('AST-000001')],
		];
		for (const [method, path] of urls) {
			const response = await call(agent, `${sim.serviceUrl}${path}`, {
				method,
				json: method === 'POST' ? {} : undefined,
			});
			expect([method, path, response.status]).toEqual([method, path, 401]);
		}
	});

	test('a token is valid for 60 simulated minutes', async () => {
		const token = await fetchToken(agent, sim);
		sim.clock.advance(59 * MINUTE);
		expect((await listInvoices(token)).status).toBe(200);
		sim.clock.advance(2 * MINUTE);
		const expired = await listInvoices(token);
		expect(expired.status).toBe(401);
		expect(expired.json.details).toEqual({ reason: 'expired_token' });
		expect(expired.json.message).toContain('expired');
		expect((await listInvoices(await fetchToken(agent, sim))).status).toBe(200);
	});

	test('secret rotation: old tokens stay valid, the old secret stops working', async () => {
		const client = sim.registerClient({ environment: 'production' });
		const oldToken = await fetchToken(agent, sim, client);
		const rotated = sim.updateClientSecret(client.clientId);
		expect(rotated.clientSecret === client.clientSecret).toBe(false);
		expect(rotated.clientId).toBe(client.clientId);

		const oldSecret = await requestToken(agent, sim, form(client));
		expect(oldSecret.status).toBe(401);
		expect(oldSecret.json.error).toBe('invalid_client');
		const newToken = await fetchToken(agent, sim, rotated);
		expect((await listInvoices(oldToken)).status).toBe(200);
		expect((await listInvoices(newToken)).status).toBe(200);

		sim.clock.advance(61 * MINUTE);
		expect((await listInvoices(oldToken)).status).toBe(401);
	});
});

describe('environments', () => {
	test('sandbox tokens work on the sandbox URL only, production tokens on production only; the log names the environment and client', async () => {
		sim.log.reset();
		const sandboxToken = await fetchToken(agent, sim, sim.defaultSandboxClient);
		const productionToken = await fetchToken(agent, sim);

		const sandbox = await listInvoices(sandboxToken, sim.sandboxServiceUrl);
		expect(sandbox.status).toBe(200);
		const production = await listInvoices(productionToken);
		expect(production.status).toBe(200);
		expect(sandbox.json).toEqual(production.json);

		const sandboxOnProduction = await listInvoices(sandboxToken);
		expect(sandboxOnProduction.status).toBe(401);
		expect(sandboxOnProduction.json.details).toEqual({ reason: 'wrong_environment' });
		expect(sandboxOnProduction.json.message).toContain('belongs to the sandbox environment');

		const productionOnSandbox = await listInvoices(productionToken, sim.sandboxServiceUrl);
		expect(productionOnSandbox.status).toBe(401);
		expect(productionOnSandbox.json.message).toContain('belongs to the production environment');
		const sandboxClient = sim.defaultSandboxClient.clientId;
		expect(sim.log.entries().slice(0, 3)).toEqual([
			expect.objectContaining({ route: 'token', clientId: sandboxClient, environment: 'sandbox' }),
			expect.objectContaining({ route: 'token', environment: 'production' }),
			expect.objectContaining({
				route: 'invoices.list',
				status: 200,
				clientId: sandboxClient,
				environment: 'sandbox',
				path: `/sandbox${paths.invoices}`,
			}),
		]);
	});
});
