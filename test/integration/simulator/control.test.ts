import { request, type Agent } from 'undici';

import { paths } from '../../../nodes/InvoicingAssets/transport/contract';
import { withDeliveryKey } from '../../../nodes/InvoicingAssets/transport/notificationUrl';
import { startSimulator, type Simulator } from '../../simulator';
import { ControlApiError, SimulatorControlClient } from '../../simulator/control-client';
import { eventually } from '../../harness/eventually';
import { expectNoSecret } from '../../harness/secrets';
import { call, caOf, createAgent, fetchToken, startReceiver, type Receiver } from './helpers';

let sim: Simulator;
let agent: Agent;
let control: SimulatorControlClient;
let receiver: Receiver;

beforeAll(async () => {
	sim = await startSimulator({ invoices: 60, assets: 30, delivery: { retrySchedule: [20] } });
	agent = createAgent(sim);
	control = new SimulatorControlClient(sim.controlUrl);
	receiver = await startReceiver(caOf(sim));
});

afterAll(async () => {
	await control.close();
	await receiver.close();
	await agent.close();
	await sim.close();
});

const listInvoices = (token: string) =>
	call(agent, `${sim.serviceUrl}${paths.invoices}?pageSize=1`, { token });

describe('control API', () => {
	test('state describes the running simulator, on a plain HTTP port apart from the service API', async () => {
		const state = await control.state();
		expect(state).toMatchObject({
			identityUrl: sim.identityUrl,
			tokenUrl: sim.tokenUrl,
			serviceUrl: sim.serviceUrl,
			sandboxServiceUrl: sim.sandboxServiceUrl,
			controlUrl: sim.controlUrl,
			caCertPath: sim.caCertPath,
			counts: { invoices: 60, assets: 30, subscriptions: 0, clients: 2, deliveriesInFlight: 0 },
			defaultClient: {
				clientId: sim.defaultClient.clientId,
				clientSecret: sim.defaultClient.clientSecret,
				environment: 'production',
				keyExpiresAt: sim.defaultClient.keyExpiresAt.toISOString(),
			},
			deliveryOptions: { retrySchedule: [20], duplicate: false },
		});
		// Plain HTTP on a port of its own, apart from the service API.
		expect(sim.controlUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
		const onService = await call(agent, `${sim.serviceUrl}/control/state`);
		expect(onService.status).toBe(404);
		const plain = await request(`${sim.controlUrl}${paths.invoices}`);
		expect(plain.statusCode).toBe(404);
		await plain.body.dump();
	});

	test('clients: register, rotate the secret, refuse 13 months', async () => {
		const client = await control.registerClient({ environment: 'production', displayName: 'e2e' });
		expect(client).toMatchObject({ environment: 'production', displayName: 'e2e' });
		const token = await fetchToken(agent, sim, client);
		expect((await listInvoices(token)).status).toBe(200);

		const rotated = await control.updateClientSecret(client.clientId, 'a-brand-new-secret');
		expect(rotated.clientSecret === 'a-brand-new-secret').toBe(true);
		await expect(fetchToken(agent, sim, client)).rejects.toThrow(/401/);
		expect(await fetchToken(agent, sim, rotated)).toEqual(expect.any(String));

		const tooLate = new Date();
		tooLate.setUTCMonth(tooLate.getUTCMonth() + 13);
		await expect(
			control.registerClient({ environment: 'sandbox', keyExpiresAt: tooLate.toISOString() }),
		).rejects.toMatchObject({ status: 400, message: expect.stringContaining('12 months') });
		await expect(control.updateClientSecret('nobody')).rejects.toBeInstanceOf(ControlApiError);

		await control.deleteClient(client.clientId);
		expect((await listInvoices(token)).json.details).toEqual({ reason: 'key_deleted' });
		await expect(control.deleteClient(client.clientId)).rejects.toThrow(/not registered/);
	});

	test('clock: advance ends tokens', async () => {
		const token = await fetchToken(agent, sim);
		const before = await control.clock();
		const after = await control.advanceClock(3601);
		expect(after.offsetMs - before.offsetMs).toBe(3601 * 1000);
		expect(Date.parse(after.now) - Date.parse(before.now)).toBeGreaterThanOrEqual(3601 * 1000);
		expect((await listInvoices(token)).status).toBe(401);
		await expect(control.advanceClock(-5)).rejects.toMatchObject({ status: 400 });
	});

	test('faults: add, list, remove, clear', async () => {
		const token = await fetchToken(agent, sim);
		const fault = await control.addFault({
			route: 'invoices.list',
			status: 503,
			retryAfter: 1,
			times: 5,
		});
		expect(fault).toMatchObject({ route: 'invoices.list', status: 503, remaining: 5, hits: 0 });
		const response = await listInvoices(token);
		expect(response.status).toBe(503);
		expect(response.headers['retry-after']).toBe('1');
		expect((await control.faults())[0]).toMatchObject({ id: fault.id, remaining: 4, hits: 1 });
		await control.removeFault(fault.id);
		expect(await control.faults()).toEqual([]);
		await control.addFault({ route: 'assets.get', drop: true });
		await control.clearFaults();
		expect(await control.faults()).toEqual([]);
		await expect(control.addFault({ route: 'token' })).rejects.toMatchObject({ status: 400 });
	});

	test('log: counts, filtered entries, reset', async () => {
		await control.resetLog();
		const token = await fetchToken(agent, sim);
		await listInvoices(token);
		await call(agent, `${sim.serviceUrl}${paths.invoice('nope')}`, { token });
		const log = await control.log();
		expect(log.counts).toEqual({ token: 1, 'invoices.list': 1, 'invoices.get': 1 });
		expect(log.tokensIssued).toBe(1);
		expect(log.entries).toHaveLength(3);
		const filtered = await control.log({ route: 'invoices.get', status: 404 });
		expect(filtered.entries).toEqual([
			expect.objectContaining({
				route: 'invoices.get',
				params: { invoiceNumber: 'nope' },
				status: 404,
			}),
		]);
		await control.resetLog();
		expect((await control.log()).entries).toEqual([]);
	});

	test('subscriptions: list and out-of-band delete', async () => {
		const token = await fetchToken(agent, sim);
		const created = await call(agent, `${sim.serviceUrl}${paths.subscriptions}`, {
			method: 'POST',
			token,
			json: { notificationUrl: `${receiver.url}/hook`, eventTypes: null, description: 'oob' },
		});
		const listed = await control.subscriptions();
		expect(listed.map((sub) => sub.id)).toContain(created.json);
		await control.deleteSubscription(created.json);
		const gone = await call(agent, `${sim.serviceUrl}${paths.subscription(created.json)}`, {
			method: 'DELETE',
			token,
		});
		expect(gone.status).toBe(404);
		await expect(control.deleteSubscription(created.json)).rejects.toMatchObject({ status: 404 });
	});

	test('invoices and events: issue, deliver, inspect deliveries', async () => {
		const token = await fetchToken(agent, sim);
		const key = 'control-test-key-value';
		const created = await call(agent, `${sim.serviceUrl}${paths.subscriptions}`, {
			method: 'POST',
			token,
			json: {
				notificationUrl: withDeliveryKey(`${receiver.url}/ctl`, key),
				eventTypes: null,
				description: null,
			},
		});
		const issued = await control.issueInvoice(
			{ customerNumber: sim.data.customerNumbers()[0] },
			{ waitForDelivery: true },
		);
		expect(issued.invoice).toMatchObject({
			status: 'issued',
			customerNumber: sim.data.customerNumbers()[0],
		});
		expect(issued.event.subscriptionIds).toEqual([created.json]);
		expect(issued.event.outcomes).toEqual([
			expect.objectContaining({ result: 'delivered', attempts: 1 }),
		]);
		expect(receiver.received.pop()?.body).toMatchObject({
			eventId: issued.event.eventId,
			data: { invoiceNumber: issued.invoice.invoiceNumber },
		});

		await control.setDeliveryOptions({ duplicate: true });
		const event = await control.emitEvent('asset.created', { assetId: 'AST-000001' });
		expect(event.outcomes).toBeUndefined();
		await control.waitForDeliveries(5000);
		const deliveries = await control.deliveries({ eventId: event.eventId });
		expect(deliveries.inFlight).toBe(0);
		expect(deliveries.options.duplicate).toBe(true);
		expect(deliveries.entries.map((entry) => [entry.copy, entry.result])).toEqual([
			[1, 'delivered'],
			[2, 'delivered'],
		]);
		expectNoSecret(deliveries, [key], 'the control API’s deliveries');
		await control.setDeliveryOptions({ duplicate: false, retrySchedule: [10, 10] });
		expect(sim.deliveries.options()).toMatchObject({ duplicate: false, retrySchedule: [10, 10] });
		await control.resetDeliveries();
		expect((await control.deliveries()).entries).toEqual([]);
		await expect(control.setDeliveryOptions({ retrySchedule: [-1] })).rejects.toMatchObject({
			status: 400,
		});
		await expect(control.emitEvent('', {})).rejects.toMatchObject({ status: 400 });
	});

	test('seed: other counts at runtime', async () => {
		const counts = await control.seed({ invoices: 7, assets: 3 });
		expect(counts).toMatchObject({ invoices: 7, assets: 3 });
		expect((await control.state()).counts).toMatchObject({ invoices: 7, assets: 3 });
		const token = await fetchToken(agent, sim);
		expect((await listInvoices(token)).json.totalItems).toBe(7);
		await expect(control.seed({ invoices: -1 })).rejects.toMatchObject({ status: 400 });
	});

	test('records change as the service changes them; the lists answer in updatedAt order or uncounted when asked', async () => {
		await control.advanceClock(60);
		const token = await fetchToken(agent, sim);
		const first = (await control.issueInvoice()).invoice;
		const second = (await control.issueInvoice()).invoice.invoiceNumber;
		const overdue = await control.changeInvoice(first.invoiceNumber, 'mark-overdue');
		expect([overdue.invoice.status, overdue.event.eventType]).toEqual([
			'overdue',
			'invoice.overdue',
		]);
		await expect(control.changeInvoice(first.invoiceNumber, 'mark-overdue')).rejects.toMatchObject({
			status: 400,
		});
		const paid = await control.changeInvoice(first.invoiceNumber, 'pay');
		expect([paid.invoice.status, paid.event.eventType]).toEqual(['paid', 'invoice.paid']);
		expect((await control.changeInvoice(second, 'cancel')).invoice.status).toBe('cancelled');
		await expect(control.changeInvoice(second, 'pay')).rejects.toBeInstanceOf(ControlApiError);
		expect((await control.editInvoice(second, { totalAmount: 12.5 })).invoice.totalAmount).toBe(
			12.5,
		);
		const asset = sim.data.assets().find((candidate) => candidate.status !== 'retired')?.assetId;
		const changes = { changes: { site: 'Zurich Lab' } };
		expect((await control.changeAsset(String(asset), 'update', changes)).asset.site).toBe(
			'Zurich Lab',
		);
		expect((await control.changeAsset(String(asset), 'retire')).event.eventType).toBe(
			'asset.retired',
		);
		const stamp = '2099-01-01T00:00:00Z';
		expect((await control.restamp('invoice', first.invoiceNumber, stamp)).invoice?.updatedAt).toBe(
			stamp,
		);

		const listed = async () => {
			const url = `${sim.serviceUrl}${paths.invoices}?updatedFrom=${first.updatedAt}`;
			const { items, totalItems } = (await call(agent, url, { token })).json;
			return [items.map((invoice: { invoiceNumber: string }) => invoice.invoiceNumber), totalItems];
		};
		expect(await listed()).toEqual([[first.invoiceNumber, second], 2]);
		await control.setListShape({ order: 'updatedAt' });
		expect(await listed()).toEqual([[second, first.invoiceNumber], 2]);
		await control.setListShape({ order: 'updatedAt-desc', totalItems: 'null' });
		expect(await listed()).toEqual([[first.invoiceNumber, second], null]);
		await control.setListShape({});
		expect(await listed()).toEqual([[first.invoiceNumber, second], 2]);
	});

	test('the subscription list answers a bare array, or the page envelope when asked', async () => {
		const token = await fetchToken(agent, sim);
		for (const subscription of sim.subscriptions.list()) sim.subscriptions.delete(subscription.id);
		const made = ['a', 'b', 'c'].map((name) =>
			sim.subscriptions.create(
				{ notificationUrl: `https://${name}.example.com/h`, eventTypes: null, description: null },
				'2026-01-01T00:00:00Z',
				sim.defaultClient.clientId,
			),
		);
		try {
			const page = async (query: string) =>
				(await call(agent, `${sim.serviceUrl}${paths.subscriptions}${query}`, { token })).json;
			expect(await page('?page=2&pageSize=2')).toEqual(made);
			await control.setListShape({ subscriptionList: 'page envelope' });
			expect(await page('?page=2&pageSize=2')).toEqual({
				items: [made[2]],
				page: 2,
				pageSize: 2,
				totalItems: 3,
			});
			expect((await page('')).items).toEqual(made);
			await control.setListShape({ subscriptionList: 'page envelope', totalItems: 'null' });
			expect((await page('?pageSize=1')).totalItems).toBeNull();
			await expect(
				control.setListShape({ subscriptionList: 'pages' } as never),
			).rejects.toMatchObject({ status: 400 });
			await control.setListShape({});
			expect(await page('')).toEqual(made);
		} finally {
			for (const subscription of made) sim.subscriptions.delete(subscription.id);
		}
	});

	test('deviations: lists that page differently (marked in the log), a create committed late; null restores the contract', async () => {
		const token = await fetchToken(agent, sim);
		const page2 = () =>
			call(agent, `${sim.serviceUrl}${paths.invoices}?page=2&pageSize=2`, { token });
		await control.setDeviations({ listPaging: { mode: 'ignore-page', totalItems: 'null' } });
		const deviating = await page2();
		expect(deviating.json.items).toEqual(sim.data.invoices().slice(0, 2));
		expect(deviating.json).toMatchObject({ page: 2, pageSize: 2, totalItems: null });
		expect(sim.log.entries({ route: 'invoices.list' }).at(-1)?.deviation).toBe(
			'list-ignores-page-total-null',
		);
		await control.setDeviations({ listPaging: { mode: 'ignore-paging' } });
		expect((await page2()).json.items).toHaveLength(sim.data.invoices().length);
		await control.setDeviations({ listPaging: { mode: 'max-page-size', maxPageSize: 1 } });
		const capped = await page2();
		expect(capped.json.items).toEqual(sim.data.invoices().slice(1, 2));
		expect(capped.json).toMatchObject({
			page: 2,
			pageSize: 1,
			totalItems: sim.data.invoices().length,
		});
		expect(sim.log.entries({ route: 'invoices.list' }).at(-1)?.deviation).toBe(
			'list-max-page-size-1',
		);
		await control.setDeviations({ listPaging: null });
		const contract = await page2();
		expect(contract.json.items).toEqual(sim.data.invoices().slice(2, 4));
		expect(sim.log.entries({ route: 'invoices.list' }).at(-1)?.deviation).toBeUndefined();
		await expect(
			control.setDeviations({ listPaging: { mode: 'other' } as never }),
		).rejects.toMatchObject({ status: 400 });

		// Far longer than reading the answer takes, however loaded the machine.
		await control.setDeviations({ createCommitDelayMs: 2000 });
		const created = await call(agent, `${sim.serviceUrl}${paths.subscriptions}`, {
			method: 'POST',
			token,
			json: {
				notificationUrl: 'https://example.com/committed-late',
				eventTypes: null,
				description: null,
			},
		});
		expect(created.status).toBe(201);
		const id = created.json as string;
		expect(sim.subscriptions.has(id)).toBe(false);
		await eventually(() => sim.subscriptions.has(id));
		await control.setDeviations({ createCommitDelayMs: null });
		sim.subscriptions.delete(id);
	});

	test('unknown control endpoints are 404 and bad JSON is 400', async () => {
		const unknown = await request(`${sim.controlUrl}/control/nothing`);
		expect(unknown.statusCode).toBe(404);
		expect(await unknown.body.json()).toMatchObject({ code: 'not_found' });
		const bad = await request(`${sim.controlUrl}/control/faults`, {
			method: 'POST',
			body: '{oops',
			headers: { 'content-type': 'application/json' },
		});
		expect(bad.statusCode).toBe(400);
		await bad.body.dump();
	});
});
