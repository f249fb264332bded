/* eslint-disable @n8n/community-nodes/no-restricted-globals */
import { randomBytes } from 'node:crypto';
import type { Agent } from 'undici';

import { paths, tokenRequestForm } from '../../../nodes/InvoicingAssets/transport/contract';
import { withDeliveryKey } from '../../../nodes/InvoicingAssets/transport/notificationUrl';
import { startSimulator, type Simulator } from '../../simulator';
import { SimulatorControlClient } from '../../simulator/control-client';
import {
	call,
	caOf,
	createAgent,
	fetchToken,
	requestToken,
	startReceiver,
	type ApiResponse,
	type Receiver,
} from './helpers';

let sim: Simulator;
let agent: Agent;
let receiver: Receiver;

beforeAll(async () => {
	sim = await startSimulator({ invoices: 30, assets: 10, delivery: { retrySchedule: [10] } });
	agent = createAgent(sim);
	receiver = await startReceiver(caOf(sim));
});

afterAll(async () => {
	await receiver.close();
	await agent.close();
	await sim.close();
});

test('no client secret, token or delivery key appears in logs, deliveries or error bodies', async () => {
	const output: string[] = [];
	const capture = (stream: NodeJS.WriteStream) =>
		jest.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
			output.push(String(chunk));
			return true;
		});
	const spies = [
		capture(process.stdout),
		capture(process.stderr),
		...(['log', 'info', 'warn', 'error', 'debug'] as const).map((method) =>
			jest.spyOn(console, method).mockImplementation((...args: unknown[]) => {
				output.push(args.map(String).join(' '));
			}),
		),
	];
	const control = new SimulatorControlClient(sim.controlUrl);
	const secrets: string[] = [];
	const errorBodies: ApiResponse[] = [];
	try {
		const client = sim.registerClient({ environment: 'production' });
		const sandbox = sim.registerClient({ environment: 'sandbox' });
		secrets.push(client.clientSecret, sandbox.clientSecret, sim.defaultClient.clientSecret);
		const form = (c: typeof client) => ({
			...tokenRequestForm(c.clientId, c.clientSecret, c.scope),
		});

		// Token errors: wrong secret, the secret pasted into the client ID, a scope mismatch.
		const wrongSecret = `${client.clientSecret}x`;
		secrets.push(wrongSecret);
		errorBodies.push(
			await requestToken(agent, sim, { ...form(client), client_secret: wrongSecret }),
		);
		errorBodies.push(
			await requestToken(agent, sim, { ...form(client), client_id: client.clientSecret }),
		);
		errorBodies.push(
			await requestToken(agent, sim, { ...form(client), scope: 'api://x/.default' }),
		);

		const token = await fetchToken(agent, sim, client);
		const sandboxToken = await fetchToken(agent, sim, sandbox);
		secrets.push(token, sandboxToken);

		// Service errors: wrong environment, an unknown token, a secret in the query string.
		errorBodies.push(
			await call(agent, `${sim.serviceUrl}${paths.invoices}`, { token: sandboxToken }),
		);
		errorBodies.push(
			await call(agent, `${sim.serviceUrl}${paths.invoices}`, { token: `${token.slice(0, -2)}zz` }),
		);
		const queryKey = randomBytes(16).toString('hex');
		secrets.push(queryKey);
		await call(
			agent,
			`${sim.serviceUrl}${paths.invoices}?apiKey=${queryKey}&access_token=${token}`,
			{
				token,
			},
		);

		// Subscriptions carrying delivery keys; invalid ones are refused without echoing the URL.
		const keys = [randomBytes(20).toString('base64url'), randomBytes(20).toString('base64url')];
		secrets.push(...keys);
		const subscribe = (notificationUrl: string, eventTypes: unknown = null) =>
			call(agent, `${sim.serviceUrl}${paths.subscriptions}`, {
				method: 'POST',
				token,
				json: { notificationUrl, eventTypes, description: null },
			});
		expect((await subscribe(withDeliveryKey(`${receiver.url}/ok`, keys[0]))).status).toBe(201);
		errorBodies.push(await subscribe(withDeliveryKey(`http://localhost:9/plain`, keys[1])));
		errorBodies.push(await subscribe(withDeliveryKey(`${receiver.url}/bad`, keys[1]), ['nope']));
		// A delivery that fails (connection refused), with its key.
		expect(
			(await subscribe(withDeliveryKey('https://localhost:9/unreachable', keys[1]))).status,
		).toBe(201);

		receiver.respondWith(500);
		await sim.issueInvoice().event.done;
		expect(receiver.received.some((delivery) => delivery.url.includes(keys[0]))).toBe(true);

		for (const response of errorBodies) expect(response.status).toBeGreaterThanOrEqual(400);

		const surfaces: Array<[string, string]> = [
			['request log', JSON.stringify(sim.log.entries())],
			['deliveries log', JSON.stringify(sim.deliveries.entries())],
			['error bodies', JSON.stringify(errorBodies.map((response) => response.text))],
			['control log', JSON.stringify(await control.log())],
			['control deliveries', JSON.stringify(await control.deliveries())],
			['output', output.join('\n')],
		];
		expect(sim.deliveries.entries().length).toBeGreaterThanOrEqual(3);
		expect(sim.log.entries().length).toBeGreaterThanOrEqual(10);
		for (const [surface, text] of surfaces) {
			for (const secret of secrets) {
				expect([surface, text.includes(secret)]).toEqual([surface, false]);
			}
		}
		// The redacted values are still recognisable as present.
		expect(JSON.stringify(sim.log.entries())).toContain('"apiKey":"__redacted__"');
		expect(JSON.stringify(sim.deliveries.entries())).toContain('apiKey=__redacted__');
	} finally {
		for (const spy of spies) spy.mockRestore();
		await control.close();
	}
});
