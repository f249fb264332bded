/**
 * The run-time contract check (test/simulator/contract-check.ts) holds the simulator's routes to
 * docs/service-contract.openapi.yaml in every test, which is why no route test here re-proves the
 * document's shapes. This file sees the check catch a request, an answer and a delivery outside
 * the document, each with the rule it broke, and let a marked deviation pass.
 */
import type { Agent } from 'undici';

import { paths } from '../../../nodes/InvoicingAssets/transport/contract';
import {
	DEVIATION_HEADER,
	startSimulator,
	takeContractViolations,
	type Simulator,
} from '../../simulator';
import { call, createAgent, fetchToken } from './helpers';

let sim: Simulator;
let agent: Agent;

beforeAll(async () => {
	sim = await startSimulator({ invoices: 5, assets: 5, delivery: { retrySchedule: [] } });
	agent = createAgent(sim);
});

afterAll(async () => {
	await agent.close();
	await sim.close();
});

/** What the check recorded in this test (taken, so that the test setup does not fail on it). */
const recorded = () =>
	takeContractViolations().map(({ direction, route, instancePath, schemaPath }) => [
		direction,
		route,
		instancePath,
		schemaPath,
	]);

test('a request and an answer outside the document are violations naming the rule', async () => {
	const token = await fetchToken(agent, sim);
	// The helpers mark their requests as deliberate deviations; an empty mark is none.
	const unmarked = { [DEVIATION_HEADER]: '' };
	await call(agent, `${sim.serviceUrl}${paths.invoices}?pageSize=101&colour=blue`, {
		token,
		headers: unmarked,
	});
	const { invoiceNumber } = sim.data.invoices()[0];
	sim.restamp('invoice', invoiceNumber, '2026-01-01T10:00:00.000Z');
	await call(agent, `${sim.serviceUrl}${paths.invoice(invoiceNumber)}`, { token });

	expect(recorded()).toEqual([
		[
			'request',
			'GET /invoice/v1/invoices',
			'query/pageSize',
			'#/components/parameters/PageSize/schema/maximum',
		],
		[
			'request',
			'GET /invoice/v1/invoices',
			'query/colour',
			'#/paths/~1invoice~1v1~1invoices/get/parameters',
		],
		[
			'response',
			'GET /invoice/v1/invoices/{invoiceNumber}',
			'/updatedAt',
			'#/components/schemas/Timestamp/pattern',
		],
	]);
});

test('a delivery outside the document is a violation; a marked one is a deviation', async () => {
	// The check reads what the service fans out; whether anyone receives it does not matter.
	const subscription = {
		id: '3f2c9a7e-1b4d-4c8e-9f0a-2d6b8e1c5a47',
		notificationUrl: 'https://localhost:9/hook',
		eventTypes: null,
		description: null,
		createdAt: '2025-01-01T00:00:00Z',
	};
	sim.subscriptions.insert(subscription, sim.defaultClient.clientId);
	await sim.emitEvent('invoice.issued', { customerNumber: 'CUST-1' }).done;
	const delivery = 'POST {notificationUrl} (webhooks/serviceEvent)';
	expect(recorded()).toEqual([
		['delivery', delivery, '/data', '#/components/schemas/InvoiceIssuedData/required'],
		['delivery', delivery, '', '#/components/schemas/Event/if'],
	]);

	await sim.emitEvent('invoice.issued', {}, { deviation: 'an event without its invoice' }).done;
	expect(recorded()).toEqual([]);
	expect(sim.contract.deviations().map((deviation) => deviation.reason)).toContain(
		'an event without its invoice',
	);
});
