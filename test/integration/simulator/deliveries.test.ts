/* eslint-disable @n8n/community-nodes/no-restricted-imports */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Agent } from 'undici';

import {
	DELIVERY_KEY_PARAMETER,
	paths,
	toServiceTimestamp,
	type SubscriptionRequest,
} from '../../../nodes/InvoicingAssets/transport/contract';
import { withDeliveryKey } from '../../../nodes/InvoicingAssets/transport/notificationUrl';
import { eventually } from '../../harness/eventually';
import { startSimulator, type Simulator } from '../../simulator';
import { createCertificateAuthority } from '../../simulator/tls';
import { expectNoSecret } from '../../harness/secrets';
import {
	call,
	caOf,
	createAgent,
	fetchToken,
	listenReceiver,
	startReceiver,
	type Receiver,
} from './helpers';

let sim: Simulator;
let agent: Agent;
let token: string;
let receiver: Receiver;

const FAST_RETRIES = [30, 30, 30];

beforeAll(async () => {
	sim = await startSimulator({
		invoices: 40,
		assets: 20,
		delivery: { retrySchedule: FAST_RETRIES },
	});
	agent = createAgent(sim);
	token = await fetchToken(agent, sim);
	receiver = await startReceiver(caOf(sim));
});

afterEach(async () => {
	await sim.waitForDeliveries(10_000);
	for (const sub of sim.subscriptions.list()) sim.subscriptions.delete(sub.id);
	sim.deliveries.setOptions({ duplicate: false, retrySchedule: FAST_RETRIES });
	receiver.reset();
});

afterAll(async () => {
	await receiver.close();
	await agent.close();
	await sim.close();
});

const newKey = () => randomBytes(18).toString('base64url');

async function subscribe(request: Partial<SubscriptionRequest> & { notificationUrl: string }) {
	const response = await call(agent, `${sim.serviceUrl}${paths.subscriptions}`, {
		method: 'POST',
		token,
		json: { eventTypes: null, description: null, ...request },
	});
	expect(response.status).toBe(201);
	return response.json as string;
}

describe('event delivery', () => {
	test('issuing an invoice POSTs invoice.issued to the exact notification URL, key included, at the simulated time', async () => {
		const key = newKey();
		const notificationUrl = withDeliveryKey(`${receiver.url}/webhook/abc/invoices?tenant=t1`, key);
		const subscriptionId = await subscribe({ notificationUrl });
		sim.clock.advance(10 * 24 * 60 * 60 * 1000);
		token = await fetchToken(agent, sim);

		const issuing = sim.clock.now().getTime();
		const { invoice, event } = sim.issueInvoice();
		const issued = sim.clock.now().getTime();
		const outcomes = await event.done;
		expect(outcomes).toEqual([
			{
				eventId: event.eventId,
				subscriptionId,
				copy: 1,
				result: 'delivered',
				attempts: 1,
				lastStatus: 200,
				lastError: null,
			},
		]);
		expect(receiver.received).toHaveLength(1);
		const [delivery] = receiver.received;
		expect(delivery.method).toBe('POST');
		expect(
			delivery.url === `/webhook/abc/invoices?tenant=t1&${DELIVERY_KEY_PARAMETER}=${key}`,
		).toBe(true);
		expect(
			new URL(delivery.url, receiver.url).searchParams.get(DELIVERY_KEY_PARAMETER) === key,
		).toBe(true);
		expect(delivery.headers['content-type']).toBe('application/json');
		expect(delivery.body).toEqual({
			eventId: event.eventId,
			eventType: 'invoice.issued',
			occurredAt: event.occurredAt,
			subscriptionId,
			data: expect.objectContaining({
				invoiceNumber: invoice.invoiceNumber,
				customerNumber: invoice.customerNumber,
			}),
		});
		// The simulated time of the issue, in whole seconds.
		expect(Date.parse(event.occurredAt)).toBeGreaterThanOrEqual(Math.floor(issuing / 1000) * 1000);
		expect(Date.parse(event.occurredAt)).toBeLessThanOrEqual(issued);
		const lineAssets = invoice.lines.map((line) => line.assetId).filter((id) => id !== null);
		expect([...delivery.body.data.assetIds].sort()).toEqual([...new Set(lineAssets)].sort());

		const [attempt] = sim.deliveries.entries({ eventId: event.eventId });
		expect(attempt).toMatchObject({
			attempt: 1,
			copy: 1,
			status: 200,
			error: null,
			result: 'delivered',
		});
		expectNoSecret(attempt.url, [key], 'the attempts log');
		expect(attempt.url).toContain(`${DELIVERY_KEY_PARAMETER}=__redacted__`);
		expect(attempt.url).toContain('tenant=t1');
	});

	test('a non-2xx answer is retried with the same eventId until it succeeds', async () => {
		const subscriptionId = await subscribe({ notificationUrl: `${receiver.url}/retry` });
		receiver.respondWith(500, 503);
		const event = sim.emitEvent('invoice.paid', { invoiceNumber: 'INV-0000001' });
		const [outcome] = await event.done;
		expect(outcome).toMatchObject({ result: 'delivered', attempts: 3, lastStatus: 200 });
		expect(receiver.received.map((delivery) => delivery.body.eventId)).toEqual([
			event.eventId,
			event.eventId,
			event.eventId,
		]);
		expect(
			sim.deliveries
				.entries({ subscriptionId })
				.map((entry) => [entry.attempt, entry.status, entry.result]),
		).toEqual([
			[1, 500, 'retrying'],
			[2, 503, 'retrying'],
			[3, 200, 'delivered'],
		]);
	});

	test('attempts are bounded: retrySchedule.length + 1, then failed', async () => {
		sim.deliveries.setOptions({ retrySchedule: [10, 10] });
		await subscribe({ notificationUrl: `${receiver.url}/down` });
		receiver.respondWith(500, 500, 500);
		const [outcome] = await sim.emitEvent('invoice.paid', { invoiceNumber: 'x' }).done;
		expect(outcome).toMatchObject({ result: 'failed', attempts: 3, lastStatus: 500 });
		expect(receiver.received).toHaveLength(3);
	});

	test('network errors are retried and recorded without the key', async () => {
		const closed = await listenReceiver(createHttpServer(), 'http');
		const port = closed.port;
		await closed.close();
		const key = newKey();
		await subscribe({ notificationUrl: withDeliveryKey(`https://localhost:${port}/gone`, key) });
		const [outcome] = await sim.emitEvent('invoice.paid', { invoiceNumber: 'x' }).done;
		expect(outcome).toMatchObject({ result: 'failed', attempts: 4, lastStatus: null });
		expect(outcome.lastError).toMatch(/ECONNREFUSED/);
		const entries = sim.deliveries.entries({ eventId: outcome.eventId });
		expect(entries).toHaveLength(4);
		expectNoSecret(entries, [key], 'the attempts log');
	});

	test('the receiver certificate is verified: an unknown CA fails the delivery', async () => {
		const dir = mkdtempSync(join(tmpdir(), 'invoicing-other-ca-'));
		const otherCa = createCertificateAuthority(dir);
		const stranger = await startReceiver(otherCa);
		try {
			sim.deliveries.setOptions({ retrySchedule: [] });
			await subscribe({ notificationUrl: `${stranger.url}/hook` });
			const [outcome] = await sim.emitEvent('invoice.paid', { invoiceNumber: 'x' }).done;
			expect(outcome.result).toBe('failed');
			expect(outcome.lastError).toMatch(/certificate/i);
			expect(stranger.received).toHaveLength(0);
		} finally {
			await stranger.close();
			rmSync(dir, { recursive: true, force: true });
		}
	});

	test('duplicate delivery sends every event twice with the same eventId', async () => {
		sim.deliveries.setOptions({ duplicate: true });
		const subscriptionId = await subscribe({ notificationUrl: `${receiver.url}/dup` });
		const { event } = sim.issueInvoice();
		const outcomes = await event.done;
		expect(outcomes.map((outcome) => [outcome.copy, outcome.result])).toEqual([
			[1, 'delivered'],
			[2, 'delivered'],
		]);
		expect(receiver.received).toHaveLength(2);
		expect(receiver.received[0].body).toEqual(receiver.received[1].body);
		expect(receiver.received[0].body).toMatchObject({ eventId: event.eventId, subscriptionId });
	});

	test('only subscriptions taking the event type receive it', async () => {
		const paidOnly = await subscribe({
			notificationUrl: `${receiver.url}/paid`,
			eventTypes: ['invoice.paid'],
		});
		const everything = await subscribe({
			notificationUrl: `${receiver.url}/all`,
			eventTypes: null,
		});
		const issuedOnly = await subscribe({
			notificationUrl: `${receiver.url}/issued`,
			eventTypes: ['invoice.issued', 'asset.created'],
		});

		const issued = sim.issueInvoice().event;
		await issued.done;
		expect(issued.deliveries.map((delivery) => delivery.subscriptionId).sort()).toEqual(
			[everything, issuedOnly].sort(),
		);
		expect(receiver.received.map((delivery) => delivery.url).sort()).toEqual(['/all', '/issued']);

		receiver.received.length = 0;
		const paid = sim.emitEvent('invoice.paid', { invoiceNumber: 'INV-0000002' });
		await paid.done;
		expect(receiver.received.map((delivery) => delivery.url).sort()).toEqual(['/all', '/paid']);
		expect(receiver.received.map((delivery) => delivery.body.subscriptionId).sort()).toEqual(
			[everything, paidOnly].sort(),
		);
		// One eventId per event, whichever subscription receives it.
		expect(new Set(receiver.received.map((delivery) => delivery.body.eventId))).toEqual(
			new Set([paid.eventId]),
		);
	});

	test('an issued invoice marked overdue delivers invoice.overdue to the subscriptions taking it or every event; paid after, invoice.paid as well', async () => {
		const overdueOnly = await subscribe({
			notificationUrl: `${receiver.url}/overdue`,
			eventTypes: ['invoice.overdue'],
		});
		const everything = await subscribe({ notificationUrl: `${receiver.url}/all` });
		await subscribe({ notificationUrl: `${receiver.url}/paid`, eventTypes: ['invoice.paid'] });
		const { invoice: issued } = sim.issueInvoice();
		await sim.waitForDeliveries(10_000);
		receiver.reset();
		sim.clock.advance(31 * 24 * 60 * 60 * 1000);
		token = await fetchToken(agent, sim);

		const { invoice, event } = sim.markInvoiceOverdue(issued.invoiceNumber);
		expect(invoice).toEqual({
			...issued,
			status: 'overdue',
			updatedAt: toServiceTimestamp(sim.clock.now()),
		});
		expect((await event.done).map((outcome) => outcome.result)).toEqual(['delivered', 'delivered']);
		expect(receiver.received.map((delivery) => delivery.url).sort()).toEqual(['/all', '/overdue']);
		expect(receiver.received.map((delivery) => delivery.body.subscriptionId).sort()).toEqual(
			[everything, overdueOnly].sort(),
		);
		expect(receiver.received[0].body).toMatchObject({
			eventId: event.eventId,
			eventType: 'invoice.overdue',
			occurredAt: event.occurredAt,
			data: { invoiceNumber: issued.invoiceNumber, status: 'overdue' },
		});
		expect(sim.data.invoice(issued.invoiceNumber)).toBe(invoice);

		receiver.reset();
		const paid = sim.payInvoice(issued.invoiceNumber);
		await paid.event.done;
		expect(paid.invoice.status).toBe('paid');
		expect(receiver.received.map((delivery) => delivery.url).sort()).toEqual(['/all', '/paid']);
		expect(receiver.received[0].body).toMatchObject({ eventType: 'invoice.paid' });
		expect(() => sim.markInvoiceOverdue(issued.invoiceNumber)).toThrow(
			/only an issued invoice can become overdue/,
		);
	});

	test('plain http notification URLs are never delivered to', async () => {
		const plain = await listenReceiver(createHttpServer(), 'http');
		try {
			// The create refuses it; one stored by other means is not called either.
			sim.subscriptions.insert(
				{
					id: '11111111-1111-4111-8111-111111111111',
					notificationUrl: withDeliveryKey(`${plain.url}/hook`, newKey()),
					eventTypes: null,
					description: null,
					createdAt: '2025-01-01T00:00:00Z',
				},
				sim.defaultClient.clientId,
			);
			const [outcome] = await sim.issueInvoice().event.done;
			expect(outcome).toMatchObject({ result: 'refused', attempts: 0 });
			expect(plain.received).toHaveLength(0);
			expect(sim.deliveries.entries({ eventId: outcome.eventId })[0].error).toMatch(/https/);
		} finally {
			await plain.close();
		}
	});

	test('a subscription deleted during retries stops them', async () => {
		sim.deliveries.setOptions({ retrySchedule: [200, 200, 200] });
		const subscriptionId = await subscribe({ notificationUrl: `${receiver.url}/deleted` });
		receiver.respondWith(500);
		const event = sim.emitEvent('invoice.cancelled', { invoiceNumber: 'x' });
		// Deleted once the first attempt failed, well before its 200 ms retry: no time raced.
		await eventually(() => sim.deliveries.entries({ eventId: event.eventId }).length > 0);
		expect(sim.subscriptions.delete(subscriptionId)).toBe(true);
		const [outcome] = await event.done;
		expect(outcome).toMatchObject({ result: 'cancelled', attempts: 1 });
		expect(receiver.received).toHaveLength(1);
	});

	test('waitForDeliveries resolves once nothing is in flight, and rejects after its timeout before', async () => {
		sim.deliveries.setOptions({ retrySchedule: [200] });
		await subscribe({ notificationUrl: `${receiver.url}/wait` });
		receiver.respondWith(500);
		sim.emitEvent('asset.retired', { assetId: 'AST-000002' });
		expect(sim.deliveries.inFlight()).toBe(1);
		await expect(sim.waitForDeliveries(50)).rejects.toThrow(/in flight/);
		await sim.waitForDeliveries();
		expect(sim.deliveries.inFlight()).toBe(0);
		expect(receiver.received).toHaveLength(2);
	});

	test('delivery options are validated', () => {
		expect(() => sim.deliveries.setOptions({ retrySchedule: [-1] })).toThrow(/retrySchedule/);
		expect(() => sim.deliveries.setOptions({ retrySchedule: new Array(30).fill(1) })).toThrow(
			/retrySchedule/,
		);
		expect(() => sim.deliveries.setOptions({ timeoutMs: 0 })).toThrow(/timeoutMs/);
		expect(() => sim.emitEvent('', {})).toThrow(/eventType/);
	});
});
