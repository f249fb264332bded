/* eslint-disable @n8n/community-nodes/no-restricted-globals */
import type { Agent } from 'undici';

import { paths, tokenRequestForm } from '../../../nodes/InvoicingAssets/transport/contract';
import {
	readHeader,
	readIdentityError,
	readRetryAfterMs,
} from '../../../nodes/InvoicingAssets/transport/responses';
import { startSimulator, type Simulator } from '../../simulator';
import { eventually, pause } from '../../harness/eventually';
import { expectNoSecret } from '../../harness/secrets';
import { call, createAgent, fetchToken, requestToken } from './helpers';

let sim: Simulator;
let agent: Agent;
let token: string;

beforeAll(async () => {
	sim = await startSimulator({ invoices: 50, assets: 20 });
	agent = createAgent(sim);
	token = await fetchToken(agent, sim);
});

afterEach(() => sim.faults.clear());

afterAll(async () => {
	await agent.close();
	await sim.close();
});

const listInvoices = () => call(agent, `${sim.serviceUrl}${paths.invoices}`, { token });
const getInvoice = (n = 'INV-0000001') =>
	call(agent, `${sim.serviceUrl}${paths.invoice(n)}`, { token });

describe('faults', () => {
	test('a status fault with times applies to the next N matching requests only', async () => {
		sim.faults.add({ route: 'invoices.list', status: 503, times: 2 });
		const first = await listInvoices();
		const second = await listInvoices();
		const third = await listInvoices();
		expect([first.status, second.status, third.status]).toEqual([503, 503, 200]);
		expect(first.json).toEqual({
			code: 'service_unavailable',
			message: expect.stringContaining('503'),
			details: null,
		});
		expect(sim.faults.list()).toEqual([]);
		// Other routes were never affected.
		expect((await getInvoice()).status).toBe(200);
	});

	test('faults apply before authentication', async () => {
		sim.faults.add({ route: 'invoices.get', status: 500, times: 1 });
		const response = await call(agent, `${sim.serviceUrl}${paths.invoice('INV-0000001')}`);
		expect(response.status).toBe(500);
		expect(response.json.code).toBe('internal_error');
	});

	test('429 and 503 carry Retry-After in seconds or as an HTTP date, or none without retryAfter', async () => {
		sim.faults.add({ route: 'invoices.list', status: 429, retryAfter: 7, times: 1 });
		const seconds = await listInvoices();
		expect(seconds.status).toBe(429);
		expect(seconds.headers['retry-after']).toBe('7');
		expect(readRetryAfterMs(readHeader(seconds.headers, 'retry-after'))).toBe(7000);
		expect(seconds.json.code).toBe('rate_limited');

		// On a whole second, as an HTTP date is: read at that moment, it asks for exactly 30 s.
		const asked = Math.floor(Date.now() / 1000) * 1000;
		const date = new Date(asked + 30_000).toUTCString();
		sim.faults.add({ route: 'invoices.list', status: 503, retryAfter: date, times: 1 });
		const dated = await listInvoices();
		expect(dated.status).toBe(503);
		expect(dated.headers['retry-after']).toBe(date);
		expect(readRetryAfterMs(readHeader(dated.headers, 'retry-after'), asked)).toBe(30_000);

		sim.faults.add({ route: 'invoices.list', status: 503, times: 1 });
		expect((await listInvoices()).headers['retry-after']).toBeUndefined();
	});

	test('the token route answers faults in the OAuth shape', async () => {
		sim.faults.add({ route: 'token', status: 503, retryAfter: 2, times: 1 });
		const client = sim.defaultClient;
		const response = await requestToken(agent, sim, {
			...tokenRequestForm(client.clientId, client.clientSecret, client.scope),
		});
		expect(response.status).toBe(503);
		expect(response.headers['retry-after']).toBe('2');
		expect(readIdentityError(response.text)?.error).toBe('temporarily_unavailable');
		expect(sim.log.entries({ route: 'token' }).pop()).toMatchObject({
			status: 503,
			fault: 'status',
		});
	});

	test('latency delays the answer, which is otherwise normal; `times: 1` delays one answer only', async () => {
		sim.faults.add({ route: 'invoices.get', latencyMs: 300, times: 1 });
		const logged = sim.log.entries().at(-1)?.seq ?? 0;
		const started = Date.now();
		const response = await getInvoice();
		// A lower bound only (the delay happened); how fast an undelayed answer is, is no check.
		expect(Date.now() - started).toBeGreaterThanOrEqual(290);
		expect(response.status).toBe(200);
		await getInvoice();
		const answers = sim.log
			.entries({ route: 'invoices.get' })
			.filter((entry) => entry.seq > logged);
		expect(answers.map((entry) => entry.fault)).toEqual(['latency', null]);
	});

	test('drop destroys the socket without a response', async () => {
		sim.faults.add({ route: 'invoices.get', drop: true, times: 1 });
		await expect(getInvoice()).rejects.toThrow(/socket|closed|reset/i);
		expect((await getInvoice()).status).toBe(200);
		const dropped = sim.log
			.entries({ route: 'invoices.get' })
			.find((entry) => entry.fault === 'drop');
		expect(dropped).toMatchObject({ status: null, fault: 'drop' });
	});

	test('afterHandling lets the service do the work, then loses or replaces the answer', async () => {
		const create = () =>
			call(agent, `${sim.serviceUrl}${paths.subscriptions}`, {
				method: 'POST',
				token,
				json: { notificationUrl: 'https://example.com/late', eventTypes: null, description: null },
			});
		const before = sim.subscriptions.size;
		sim.faults.add({ route: 'subscriptions.create', drop: true, afterHandling: true, times: 1 });
		await expect(create()).rejects.toThrow(/socket|closed|reset/i);
		expect(sim.subscriptions.size).toBe(before + 1);
		sim.faults.add({ route: 'subscriptions.create', status: 502, afterHandling: true, times: 1 });
		expect((await create()).status).toBe(502);
		expect(sim.subscriptions.size).toBe(before + 2);
		const late = sim.log.entries({ route: 'subscriptions.create' }).slice(-2);
		expect(late.map((entry) => [entry.status, entry.fault])).toEqual([
			[null, 'drop'],
			[502, 'status'],
		]);
		expect(() => sim.faults.add({ route: 'invoices.get', afterHandling: true })).toThrow(
			/afterHandling needs drop, status, latencyMs or hold/,
		);

		// latencyMs alone: the request is served at once (its token checked then), answered later.
		sim.faults.add({
			route: 'subscriptions.create',
			latencyMs: 300,
			afterHandling: true,
			times: 1,
		});
		const slow = create();
		while (sim.subscriptions.size < before + 3)
			await new Promise((resolve) => setTimeout(resolve, 5));
		expect(sim.log.count('subscriptions.create', { status: 201 })).toBe(0);
		expect((await slow).status).toBe(201);
		expect(sim.log.entries({ route: 'subscriptions.create' }).at(-1)?.fault).toBe('latency');
	});

	test('hold keeps a request, or with afterHandling its answer, until the test removes the fault', async () => {
		const answered: string[] = [];
		const held = sim.faults.add({ route: 'invoices.get', hold: true, times: 1 });
		const got = getInvoice().finally(() => answered.push('get'));
		await eventually(() => sim.log.inFlight('invoices.get') === 1);
		// A hold that let the request go would answer meanwhile.
		await pause(100);
		expect(answered).toEqual([]);
		// Used up by its one request, which it still holds until removed.
		expect(sim.faults.list()).toEqual([]);
		sim.faults.remove(held.id);
		expect((await got).status).toBe(200);
		expect(sim.log.entries({ route: 'invoices.get' }).at(-1)?.fault).toBe('hold');

		// After handling: the service did the work; its answer waits.
		const before = sim.subscriptions.size;
		sim.faults.add({ route: 'subscriptions.create', hold: true, afterHandling: true });
		const created = call(agent, `${sim.serviceUrl}${paths.subscriptions}`, {
			method: 'POST',
			token,
			json: { notificationUrl: 'https://example.com/held', eventTypes: null, description: null },
		}).finally(() => answered.push('create'));
		await eventually(() => sim.subscriptions.size === before + 1);
		await pause(100);
		expect(answered).toEqual(['get']);
		sim.faults.clear();
		expect((await created).status).toBe(201);
		expect(sim.log.entries({ route: 'subscriptions.create' }).at(-1)?.fault).toBe('hold');
	});

	test('method limits a fault, and custom bodies and headers are sent as given', async () => {
		sim.faults.add({
			route: 'subscriptions.create',
			method: 'POST',
			status: 502,
			body: '<html>Bad gateway</html>',
			headers: { 'content-type': 'text/html' },
		});
		const created = await call(agent, `${sim.serviceUrl}${paths.subscriptions}`, {
			method: 'POST',
			token,
			json: { notificationUrl: 'https://example.com/hook', eventTypes: null, description: null },
		});
		expect(created.status).toBe(502);
		expect(created.headers['content-type']).toBe('text/html');
		expect(created.text).toBe('<html>Bad gateway</html>');
		sim.faults.clear();

		sim.faults.add({ route: 'subscriptions.list', method: 'DELETE', status: 500 });
		expect((await call(agent, `${sim.serviceUrl}${paths.subscriptions}`, { token })).status).toBe(
			200,
		);
		sim.faults.clear();

		sim.faults.add({
			route: 'invoices.get',
			status: 409,
			body: { code: 'conflict', message: 'busy', details: { n: 1 } },
		});
		expect((await getInvoice()).json).toEqual({
			code: 'conflict',
			message: 'busy',
			details: { n: 1 },
		});
	});

	test('invalid faults are refused', () => {
		expect(() => sim.faults.add({ route: 'invoices.nope' as 'invoices.get', status: 500 })).toThrow(
			/route/,
		);
		expect(() => sim.faults.add({ route: 'invoices.get' })).toThrow(/at least one/);
		expect(() => sim.faults.add({ route: 'invoices.get', status: 99 })).toThrow(/status/);
		expect(() => sim.faults.add({ route: 'invoices.get', drop: true, status: 500 })).toThrow(
			/not both/,
		);
		expect(() => sim.faults.add({ route: 'invoices.get', status: 500, probability: 2 })).toThrow(
			/probability/,
		);
		expect(() => sim.faults.add({ route: 'invoices.get', status: 500, times: 0 })).toThrow(/times/);
	});
});

describe('request log', () => {
	test('counts per route, entries with decoded params and query, never credentials', async () => {
		sim.log.reset();
		expect(sim.log.count()).toBe(0);
		const startedAt = Date.now();
		const fresh = await fetchToken(agent, sim);
		// Secrets in the query, as a careless client sends them, are logged redacted.
		const key = 'a-delivery-key-in-the-query';
		await call(
			agent,
			`${sim.serviceUrl}${paths.invoices}?status=paid&pageSize=5&apiKey=${key}&access_token=${fresh}`,
			{ token: fresh },
		);
		await call(agent, `${sim.serviceUrl}${paths.invoices}?status=paid&pageSize=5`, {
			token: fresh,
		});
		await call(agent, `${sim.serviceUrl}${paths.invoice('INV 1/2')}`, { token: fresh });
		await call(agent, `${sim.serviceUrl}${paths.assets}`, { token: fresh });
		await call(agent, `${sim.serviceUrl}${paths.asset('AST-000001')}`, { token: fresh });
		await call(agent, `${sim.serviceUrl}/nothing/here`, { token: fresh });
		await call(agent, `${sim.serviceUrl}${paths.invoices}`, { method: 'PUT', token: fresh });

		expect(sim.log.tokensIssued()).toBe(1);
		expect(sim.log.count('token')).toBe(1);
		expect(sim.log.count('invoices.list')).toBe(2);
		expect(sim.log.count('invoices.get')).toBe(1);
		expect(sim.log.count('assets.list')).toBe(1);
		expect(sim.log.count('assets.get')).toBe(1);
		expect(sim.log.count('unknown')).toBe(2);
		expect(sim.log.count()).toBe(8);
		expect(sim.log.countsByRoute()).toEqual({
			token: 1,
			'invoices.list': 2,
			'invoices.get': 1,
			'assets.list': 1,
			'assets.get': 1,
			unknown: 2,
		});
		expect(sim.log.count('invoices.list', { status: 200 })).toBe(2);

		const [withSecrets, list] = sim.log.entries({ route: 'invoices.list' });
		expect(withSecrets.query).toEqual({
			status: 'paid',
			pageSize: '5',
			apiKey: '__redacted__',
			access_token: '__redacted__',
		});
		expect(list).toEqual({
			seq: expect.any(Number),
			at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/),
			receivedAtMs: expect.any(Number),
			remotePort: expect.any(Number),
			route: 'invoices.list',
			method: 'GET',
			path: paths.invoices,
			params: {},
			query: { status: 'paid', pageSize: '5' },
			status: 200,
			errorCode: null,
			clientId: sim.defaultClient.clientId,
			environment: 'production',
			fault: null,
			durationMs: expect.any(Number),
		});
		// Arrival in real time (milliseconds with a fraction), and the client’s source port.
		expect(list.receivedAtMs).toBeGreaterThanOrEqual(startedAt);
		expect(list.receivedAtMs).toBeLessThanOrEqual(Date.now());
		expect(list.remotePort).toBeGreaterThanOrEqual(1);
		expect(list.remotePort).toBeLessThanOrEqual(65535);
		expect(sim.log.entries({ route: 'invoices.get' })[0].params).toEqual({
			invoiceNumber: 'INV 1/2',
		});
		const unknown = sim.log.entries({ route: 'unknown' });
		expect(unknown.map((entry) => [entry.method, entry.status])).toEqual([
			['GET', 404],
			['PUT', 405],
		]);
		expectNoSecret(
			sim.log.entries(),
			[fresh, key, sim.defaultClient.clientSecret],
			'the request log',
		);

		sim.log.reset();
		expect(sim.log.count()).toBe(0);
		expect(sim.log.entries()).toEqual([]);
		expect(sim.log.tokensIssued()).toBe(0);
	});

	test('the simulated time is recorded', async () => {
		sim.log.reset();
		const before = sim.clock.advance(3 * 24 * 60 * 60 * 1000);
		await requestToken(agent, sim, {
			...tokenRequestForm(
				sim.defaultClient.clientId,
				sim.defaultClient.clientSecret,
				sim.defaultClient.scope,
			),
		});
		const [entry] = sim.log.entries();
		const at = Date.parse(entry.at);
		// The simulated time of the request (whole seconds): between these two, three days ahead.
		expect(at).toBeGreaterThanOrEqual(Math.floor(before.getTime() / 1000) * 1000);
		expect(at).toBeLessThanOrEqual(sim.clock.now().getTime());
		expect(at - Date.now()).toBeGreaterThan(2.9 * 24 * 60 * 60 * 1000);
	});
});
