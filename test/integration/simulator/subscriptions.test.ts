import type { Agent } from 'undici';

import {
	EVENT_TYPES,
	paths,
	SUBSCRIPTION_NOT_FOUND_ERROR,
} from '../../../nodes/InvoicingAssets/transport/contract';
import { TIMESTAMP_PATTERN } from '../../simulator/contract';
import {
	readCreatedSubscriptionId,
	readServiceError,
	readSubscriptionList,
} from '../../../nodes/InvoicingAssets/transport/responses';
import { withDeliveryKey } from '../../../nodes/InvoicingAssets/transport/notificationUrl';
import { startSimulator, type Simulator } from '../../simulator';
import { expectNoSecret } from '../../harness/secrets';
import { call, createAgent, fetchToken, UUID_PATTERN } from './helpers';

let sim: Simulator;
let agent: Agent;
let token: string;

beforeAll(async () => {
	sim = await startSimulator({ invoices: 5, assets: 5 });
	agent = createAgent(sim);
	token = await fetchToken(agent, sim);
});

afterAll(async () => {
	await agent.close();
	await sim.close();
});

const create = (body: unknown, headers?: Record<string, string>) =>
	call(agent, `${sim.serviceUrl}${paths.subscriptions}`, {
		method: 'POST',
		token,
		json: body,
		headers,
	});
const list = () => call(agent, `${sim.serviceUrl}${paths.subscriptions}`, { token });
const remove = (id: string) =>
	call(agent, `${sim.serviceUrl}${paths.subscription(id)}`, { method: 'DELETE', token });

const hookUrl = (name: string) =>
	withDeliveryKey(`https://hooks.example.com/webhook/${name}`, `key-${name}`);

describe('create', () => {
	test('answers 201 with the GUID as a JSON string', async () => {
		const response = await create({
			notificationUrl: hookUrl('a'),
			eventTypes: ['invoice.issued'],
			description: 'Accounting sync',
		});
		expect(response.status).toBe(201);
		expect(response.headers['content-type']).toBe('application/json');
		expect(typeof response.json).toBe('string');
		expect(response.json).toMatch(UUID_PATTERN);
		expect(readCreatedSubscriptionId(response.text)).toBe(response.json);
		expect(response.headers.location).toBe(`${sim.serviceUrl}${paths.subscription(response.json)}`);

		const stored = sim.subscriptions.get(response.json);
		expect(stored).toEqual({
			id: response.json,
			notificationUrl: hookUrl('a'),
			eventTypes: ['invoice.issued'],
			description: 'Accounting sync',
			createdAt: expect.stringMatching(TIMESTAMP_PATTERN),
		});
	});

	test('eventTypes and description may be null or left out', async () => {
		const explicit = await create({
			notificationUrl: hookUrl('b'),
			eventTypes: null,
			description: null,
		});
		expect(explicit.status).toBe(201);
		const omitted = await create({ notificationUrl: hookUrl('c') });
		expect(omitted.status).toBe(201);
		for (const id of [explicit.json, omitted.json]) {
			expect(sim.subscriptions.get(id)).toMatchObject({ eventTypes: null, description: null });
		}
	});

	test('every known event type is accepted', async () => {
		const response = await create({
			notificationUrl: hookUrl('all'),
			eventTypes: [...EVENT_TYPES],
			description: null,
		});
		expect(response.status).toBe(201);
	});

	test.each([
		['http://hooks.example.com/webhook?apiKey=abc', 'TLS 1.2'],
		['ftp://hooks.example.com/webhook', 'https'],
		['/webhook/relative', 'absolute'],
		['not a url', 'absolute'],
		['', 'required'],
	])('refuses the notification URL %j with 400 invalid_notification_url', async (url, mention) => {
		const response = await create({ notificationUrl: url, eventTypes: null, description: null });
		expect(response.status).toBe(400);
		expect(response.json.code).toBe('invalid_notification_url');
		expect(response.json.message).toContain(mention);
		expect(response.json.details).toEqual({ field: 'notificationUrl' });
		if (url.includes('apiKey')) expectNoSecret(response.text, ['abc'], 'the refusal');
	});

	test('the http refusal names TLS 1.2 and plain HTTP', async () => {
		const response = await create({
			notificationUrl: 'http://localhost:5678/webhook',
			eventTypes: null,
			description: null,
		});
		expect(readServiceError(response.text).message).toMatch(/TLS 1\.2.*plain HTTP/);
	});

	test.each([
		[[]],
		[['invoice.bogus']],
		[['invoice.issued', 'invoice.issued']],
		['invoice.issued'],
		[[42]],
	])('refuses eventTypes %j with 400 invalid_event_types', async (eventTypes) => {
		const response = await create({ notificationUrl: hookUrl('x'), eventTypes, description: null });
		expect(response.status).toBe(400);
		expect(response.json.code).toBe('invalid_event_types');
		expect(response.json.details.allowed).toEqual([...EVENT_TYPES]);
	});

	test('refuses a description that is not a string', async () => {
		const response = await create({
			notificationUrl: hookUrl('x'),
			eventTypes: null,
			description: 7,
		});
		expect(response.status).toBe(400);
		expect(response.json.code).toBe('invalid_description');
	});

	test('refuses a body that is not JSON', async () => {
		const wrongType = await call(agent, `${sim.serviceUrl}${paths.subscriptions}`, {
			method: 'POST',
			token,
			body: `notificationUrl=${encodeURIComponent(hookUrl('x'))}`,
			headers: { 'content-type': 'application/x-www-form-urlencoded' },
		});
		expect(wrongType.status).toBe(415);
		expect(wrongType.json.code).toBe('unsupported_media_type');

		const malformed = await call(agent, `${sim.serviceUrl}${paths.subscriptions}`, {
			method: 'POST',
			token,
			body: '{"notificationUrl":',
			headers: { 'content-type': 'application/json' },
		});
		expect(malformed.status).toBe(400);
		expect(malformed.json.code).toBe('invalid_json');

		const array = await create([hookUrl('x')]);
		expect(array.status).toBe(400);
		expect(array.json.code).toBe('invalid_body');
	});

	test('refuses an Accept header without JSON', async () => {
		const response = await call(agent, `${sim.serviceUrl}${paths.subscriptions}`, {
			token,
			headers: { accept: 'text/html' },
		});
		expect(response.status).toBe(406);
		expect(response.json.code).toBe('not_acceptable');
	});
});

describe('list and delete', () => {
	test('lists every subscription with all fields, in creation order', async () => {
		const first = await create({
			notificationUrl: hookUrl('l1'),
			eventTypes: ['asset.created'],
			description: 'one',
		});
		const second = await create({
			notificationUrl: hookUrl('l2'),
			eventTypes: null,
			description: null,
		});
		const response = await list();
		expect(response.status).toBe(200);
		expect(Array.isArray(response.json)).toBe(true);
		const subscriptions = readSubscriptionList(response.text)?.items ?? [];
		expect(subscriptions).toEqual(sim.subscriptions.list(sim.defaultClient.clientId));
		const ids = subscriptions.map((sub) => sub.id);
		expect(ids.indexOf(first.json)).toBeLessThan(ids.indexOf(second.json));
		for (const sub of subscriptions) {
			expect(Object.keys(sub).sort()).toEqual(
				['createdAt', 'description', 'eventTypes', 'id', 'notificationUrl'].sort(),
			);
		}
		expect(subscriptions.find((sub) => sub.id === second.json)).toEqual({
			id: second.json,
			notificationUrl: hookUrl('l2'),
			eventTypes: null,
			description: null,
			createdAt: expect.stringMatching(TIMESTAMP_PATTERN),
		});
	});

	test('delete answers 204, then 404 once gone', async () => {
		const created = await create({
			notificationUrl: hookUrl('d'),
			eventTypes: null,
			description: null,
		});
		const deleted = await remove(created.json);
		expect(deleted.status).toBe(204);
		expect(deleted.text).toBe('');
		expect((await list()).json.map((sub: { id: string }) => sub.id)).not.toContain(created.json);

		const again = await remove(created.json);
		expect(again.status).toBe(404);
		expect(again.json).toEqual({
			code: SUBSCRIPTION_NOT_FOUND_ERROR,
			message: `Subscription '${created.json}' was not found.`,
			details: null,
		});
		expect((await remove('not-a-guid')).json.code).toBe(SUBSCRIPTION_NOT_FOUND_ERROR);
	});

	test('a path the service does not know is a 404 of another kind than an unknown subscription', async () => {
		const created = await create({
			notificationUrl: hookUrl('p'),
			eventTypes: null,
			description: null,
		});
		const wrongPaths = [
			`/subscription/v1/subscriptions/${created.json}`,
			`/subscription/v2/subscription/${created.json}`,
			`${paths.subscription(created.json)}/extra`,
		];
		for (const path of wrongPaths) {
			const answer = await call(agent, `${sim.serviceUrl}${path}`, { method: 'DELETE', token });
			expect([path, answer.status, answer.json.code]).toEqual([path, 404, 'not_found']);
		}
		expect(sim.subscriptions.has(created.json)).toBe(true);
		expect(sim.log.entries({ route: 'unknown', method: 'DELETE' }).slice(-3)).toEqual(
			wrongPaths.map((path) => expect.objectContaining({ path, errorCode: 'not_found' })),
		);
	});

	test('GET on a subscription is 405 with Allow: DELETE', async () => {
		const response = await call(agent, `${sim.serviceUrl}${paths.subscription('x')}`, { token });
		expect(response.status).toBe(405);
		expect(response.headers.allow).toBe('DELETE');
		expect(response.json.code).toBe('method_not_allowed');
	});

	test('the log counts each route', async () => {
		sim.log.reset();
		await create({ notificationUrl: hookUrl('n'), eventTypes: null, description: null });
		await list();
		await list();
		await remove('00000000-0000-4000-8000-000000000000');
		expect(sim.log.count('subscriptions.create')).toBe(1);
		expect(sim.log.count('subscriptions.list')).toBe(2);
		expect(sim.log.count('subscriptions.delete')).toBe(1);
		expect(sim.log.entries({ route: 'subscriptions.delete' })[0]).toMatchObject({
			status: 404,
			errorCode: SUBSCRIPTION_NOT_FOUND_ERROR,
			params: { id: '00000000-0000-4000-8000-000000000000' },
		});
	});
});

describe('each client sees only its own subscriptions', () => {
	test('the list shows the caller’s, and another client’s cannot be deleted (404 as if unknown)', async () => {
		const other = sim.registerClient({ environment: 'production' });
		const sandbox = sim.defaultSandboxClient;
		const otherToken = await fetchToken(agent, sim, other);
		const sandboxToken = await fetchToken(agent, sim, sandbox);
		const ours = await create({ notificationUrl: hookUrl('own'), eventTypes: null });
		const theirs = await call(agent, `${sim.serviceUrl}${paths.subscriptions}`, {
			method: 'POST',
			token: otherToken,
			json: { notificationUrl: hookUrl('theirs'), eventTypes: null, description: null },
		});
		const inSandbox = await call(agent, `${sim.sandboxServiceUrl}${paths.subscriptions}`, {
			method: 'POST',
			token: sandboxToken,
			json: { notificationUrl: hookUrl('sandbox'), eventTypes: null, description: null },
		});
		expect([ours.status, theirs.status, inSandbox.status]).toEqual([201, 201, 201]);

		const idsListedFor = async (url: string, bearer: string) =>
			(
				(await call(agent, `${url}${paths.subscriptions}`, { token: bearer })).json as Array<{
					id: string;
				}>
			).map((subscription) => subscription.id);
		const mine = await idsListedFor(sim.serviceUrl, token);
		expect(mine).toContain(ours.json);
		expect(mine).not.toContain(theirs.json);
		expect(mine).not.toContain(inSandbox.json);
		expect(await idsListedFor(sim.serviceUrl, otherToken)).toEqual([theirs.json]);
		expect(await idsListedFor(sim.sandboxServiceUrl, sandboxToken)).toEqual([inSandbox.json]);

		for (const id of [theirs.json, inSandbox.json]) {
			const refused = await remove(id);
			expect([refused.status, refused.json.code]).toEqual([404, SUBSCRIPTION_NOT_FOUND_ERROR]);
			expect(sim.subscriptions.has(id)).toBe(true);
		}
		const byOwner = await call(agent, `${sim.serviceUrl}${paths.subscription(theirs.json)}`, {
			method: 'DELETE',
			token: otherToken,
		});
		expect(byOwner.status).toBe(204);
		expect(sim.subscriptions.has(theirs.json)).toBe(false);
	});
});

describe('the page envelope (a test setting; the contract assumes a bare array)', () => {
	afterEach(() => sim.setSubscriptionListPageSize(undefined));

	test('pages of the caller’s subscriptions, page and pageSize from the query', async () => {
		for (const name of ['e1', 'e2', 'e3']) {
			await create({ notificationUrl: hookUrl(name), eventTypes: null, description: null });
		}
		const all = sim.subscriptions.list(sim.defaultClient.clientId);
		sim.setSubscriptionListPageSize(2);
		const page = async (query: string) =>
			(await call(agent, `${sim.serviceUrl}${paths.subscriptions}${query}`, { token })).json;

		expect(await page('')).toEqual({
			items: all.slice(0, 2),
			page: 1,
			pageSize: 2,
			totalItems: all.length,
		});
		expect((await page('?page=2&pageSize=2')).items).toEqual(all.slice(2, 4));
		expect((await page(`?page=1&pageSize=${all.length}`)).items).toEqual(all);
		expect((await page(`?page=${all.length + 1}&pageSize=1`)).items).toEqual([]);
		const refused = await call(agent, `${sim.serviceUrl}${paths.subscriptions}?pageSize=0`, {
			token,
		});
		expect([refused.status, refused.json.code]).toEqual([400, 'invalid_parameter']);
		expect(() => sim.setSubscriptionListPageSize(0)).toThrow(/at least 1/);
	});
});
