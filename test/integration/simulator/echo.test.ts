import type { Agent } from 'undici';

import { paths, tokenRequestForm } from '../../../nodes/InvoicingAssets/transport/contract';
import { startSimulator, type Simulator } from '../../simulator';
import { SimulatorControlClient } from '../../simulator/control-client';
import { call, createAgent, fetchToken, requestToken } from './helpers';

/** A client secret with the characters form encoding changes. */
const CLIENT_SECRET = 'echo~secret+with/odd=chars&more';
const DELIVERY_KEY = `dk-${Math.random().toString(36).slice(2)}.with_plenty-of.chars`;

let sim: Simulator;
let agent: Agent;
let token: string;

beforeAll(async () => {
	sim = await startSimulator({
		invoices: 5,
		assets: 5,
		echoRequests: true,
		defaultClient: { clientSecret: CLIENT_SECRET },
	});
	agent = createAgent(sim);
	token = await fetchToken(agent, sim);
});

afterEach(() => {
	sim.faults.clear();
	sim.setEchoRequests(true);
});

afterAll(async () => {
	await agent.close();
	await sim.close();
});

const client = () => sim.defaultClient;

describe('echoRequests: every error answer quotes the request back', () => {
	test('the identity service quotes the form, client secret included, in error_description', async () => {
		sim.faults.add({ route: 'token', status: 400, body: { error: 'invalid_request' }, times: 1 });
		const answer = await requestToken(agent, sim, {
			...tokenRequestForm(client().clientId, CLIENT_SECRET, client().scope),
		});
		const form = new URLSearchParams({ client_secret: CLIENT_SECRET }).toString();
		expect(answer.status).toBe(400);
		expect(answer.json.error).toBe('invalid_request');
		expect(answer.json.error_description).toContain(form);
		expect(answer.json.error_description).toContain(JSON.stringify(form).slice(1, -1));
		expect(answer.json.error_description).toContain(encodeURIComponent(form));
	});

	test('the Data Service quotes the bearer token, and a notification URL percent-encoded, in message', async () => {
		const notificationUrl = `https://n8n.example.com/webhook/x?apiKey=${DELIVERY_KEY}`;
		sim.faults.add({ route: 'subscriptions.create', status: 422, times: 1 });
		const create = await call(agent, `${sim.serviceUrl}${paths.subscriptions}`, {
			method: 'POST',
			token,
			json: { notificationUrl, eventTypes: null, description: null },
		});
		expect(create.status).toBe(422);
		expect(create.json.message).toMatch(
			/^Simulated 422 response \(fault injection\)\. The request was: POST /,
		);
		expect(create.json.message).toContain(`Bearer ${token}`);
		expect(create.json.message).toContain(`apiKey%3D${DELIVERY_KEY}`);
		// The key of a create that a fault answered is recorded all the same, for the secret scan.
		expect(sim.secrets().get(DELIVERY_KEY)).toBe('deliveryKey');

		// An error of the service itself is quoted as well, in its own shape.
		const refused = await call(agent, `${sim.serviceUrl}${paths.invoices}`, {
			token: 'no-such-token',
		});
		expect(refused.status).toBe(401);
		expect(refused.json).toEqual({
			code: 'unauthorized',
			message: expect.stringContaining('Bearer no-such-token'),
			details: { reason: 'unknown_token' },
		});
	});

	test('answers below 400 are left as they are, and the switch turns it off (also over the control API)', async () => {
		const listed = await call(agent, `${sim.serviceUrl}${paths.invoices}`, { token });
		expect(listed.status).toBe(200);
		expect(listed.text).not.toContain('The request was');

		const control = new SimulatorControlClient(sim.controlUrl);
		await control.setEchoRequests(false);
		await control.close();
		const refused = await call(agent, `${sim.serviceUrl}${paths.invoices}`, {
			token: 'no-such-token',
		});
		expect(refused.json.message).not.toContain('The request was');
		expect(refused.text).not.toContain('no-such-token');
	});
});
