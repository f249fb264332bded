/**
 * The package among n8n's own parts, in a real n8n 2.41.1 over HTTPS:
 *
 * - n8n lists the action node's AI-tool variant (`usableAsTool`).
 * - n8n's core HTTP Request node uses the credential as a predefined credential type, for an
 *   endpoint the action node does not offer (one chosen page of a filtered invoice list): the token
 *   comes from the credential's preAuthentication, the request carries it as a bearer token, the
 *   next run reuses it, and an expired token is renewed once.
 * - The README's example workflows (docs/examples/*.json) import through the public API; the
 *   new-invoice one runs once on an issued invoice, and the overdue report's nodes produce the
 *   simulator's own totals.
 */
import { randomUUID } from 'node:crypto';
import type { INode } from 'n8n-workflow';
import { request } from 'undici';

import { paths } from '../../nodes/InvoicingAssets/transport/contract';
import { expectNoSecret } from '../harness/secrets';
import { EXAMPLES, loadExample } from '../n8n/examples';
import {
	getExecution,
	nodeOutput,
	waitFor,
	waitForExecutions,
	type Execution,
} from '../n8n/executions';
import { N8nInstance } from '../n8n/instance';
import { disposePackedPackage, PACKAGE_NAME } from '../n8n/package';
import { startSimulator, type Simulator } from '../simulator';
import { ACTION_TYPE, CREDENTIAL_TYPE, type WorkflowJson } from './workflows';

jest.setTimeout(10 * 60_000);

const MINUTE = 60_000;
const TOOL_TYPE = `${PACKAGE_NAME}.invoicingAssetsTool`;

let sim: Simulator;
let n8n: N8nInstance;
let credential: { id: string; name: string };

async function createWorkflow(workflow: WorkflowJson): Promise<string> {
	const created = await n8n.api<{ id: string }>('POST', '/workflows', workflow);
	expect(created.status).toBe(200);
	return created.body.id;
}

async function publish(id: string) {
	expect((await n8n.api('POST', `/workflows/${id}/publish`)).status).toBe(200);
}

async function unpublish(id: string) {
	expect((await n8n.api('POST', `/workflows/${id}/unpublish`)).status).toBe(200);
}

async function finishedExecution(workflowId: string, count = 1): Promise<Execution> {
	const [newest] = await waitForExecutions(n8n, workflowId, count);
	return await getExecution(n8n, newest.id);
}

function outputOf(execution: Execution, node: string) {
	return nodeOutput(execution, node).map((item) => item.json);
}

/** Calls a core Webhook node's production URL, retrying while n8n is still registering it. */
async function callWebhook(path: string): Promise<{ status: number; body: unknown }> {
	return await waitFor(`the webhook /webhook/${path}`, async () => {
		const response = await request(`${n8n.url}/webhook/${path}`, { method: 'GET' });
		const text = await response.body.text();
		if (response.statusCode === 404 && /not registered/.test(text)) return undefined;
		return { status: response.statusCode, body: JSON.parse(text) as unknown };
	});
}

/** Webhook (responds with the last node's output) → the given nodes, in a line. */
function webhookWorkflow(
	name: string,
	path: string,
	nodes: INode[],
	allEntries = false,
): WorkflowJson {
	const webhook: INode = {
		id: randomUUID(),
		name: 'Webhook',
		type: 'n8n-nodes-base.webhook',
		typeVersion: 2.1,
		position: [0, 0],
		webhookId: randomUUID(),
		parameters: {
			httpMethod: 'GET',
			path,
			responseMode: 'lastNode',
			...(allEntries ? { responseData: 'allEntries' } : {}),
			options: {},
		},
	};
	const chain = [webhook, ...nodes];
	return {
		name,
		settings: { executionOrder: 'v1' },
		nodes: chain,
		connections: Object.fromEntries(
			chain
				.slice(0, -1)
				.map((node, index) => [
					node.name,
					{ main: [[{ node: chain[index + 1].name, type: 'main', index: 0 }]] },
				]),
		),
	};
}

beforeAll(async () => {
	sim = await startSimulator({ invoices: 60, assets: 20 });
	n8n = new N8nInstance({ name: 'ecosystem' });
	await n8n.start();
	const created = await n8n.api<{ id: string; name: string }>('POST', '/credentials', {
		name: 'Invoicing & Assets account',
		type: CREDENTIAL_TYPE,
		data: {
			environment: 'production',
			baseUrl: sim.serviceUrl,
			identityUrl: sim.identityUrl,
			scope: sim.defaultClient.scope,
			clientId: sim.defaultClient.clientId,
			clientSecret: sim.defaultClient.clientSecret,
		},
	});
	expect(created.status).toBe(200);
	credential = { id: created.body.id, name: created.body.name };
});

afterAll(async () => {
	await n8n?.dispose();
	await sim?.close();
	disposePackedPackage();
});

test('n8n lists the action node as an AI tool (usableAsTool): Invoicing & Assets Tool, an ai_tool output, the same credential', async () => {
	const nodes = await n8n.signedIn<
		Array<{
			name: string;
			displayName: string;
			outputs: unknown;
			credentials?: Array<{ name: string }>;
			properties: Array<{ name: string }>;
		}>
	>('GET', '/types/nodes.json');
	expect(nodes.status).toBe(200);
	const tool = nodes.body.find((node) => node.name === TOOL_TYPE);
	const action = nodes.body.find((node) => node.name === ACTION_TYPE);
	expect(tool).toBeDefined();
	expect(tool?.displayName).toBe('Invoicing & Assets Tool');
	expect(JSON.stringify(tool?.outputs)).toContain('ai_tool');
	expect(tool?.credentials?.map((entry) => entry.name)).toEqual([CREDENTIAL_TYPE]);
	for (const parameter of ['resource', 'operation']) {
		expect(tool?.properties.map((property) => property.name)).toContain(parameter);
	}
	expect(action?.properties.map((property) => property.name)).toContain('resource');
});

test("n8n's HTTP Request node uses the credential (predefined type) for a page of a filtered invoice list: token from preAuthentication, sent as a bearer token, reused, renewed once when expired", async () => {
	const path = `invoices-page-${randomUUID().slice(0, 8)}`;
	const httpRequest: INode = {
		id: randomUUID(),
		name: 'Overdue Invoices, Page 2',
		type: 'n8n-nodes-base.httpRequest',
		typeVersion: 4.2,
		position: [240, 0],
		parameters: {
			method: 'GET',
			url: `${sim.serviceUrl}${paths.invoices}?status=overdue&page=2&pageSize=3`,
			authentication: 'predefinedCredentialType',
			nodeCredentialType: CREDENTIAL_TYPE,
			options: {},
		},
		credentials: { [CREDENTIAL_TYPE]: credential },
	};
	const clientId = sim.defaultClient.clientId;
	const tokenRequests = () => sim.log.count('token', { clientId });
	const listRequests = () => sim.log.entries({ route: 'invoices.list', clientId });
	expect(tokenRequests()).toBe(0);

	const id = await createWorkflow(
		webhookWorkflow('HTTP Request with the credential', path, [httpRequest]),
	);
	await publish(id);
	const first = await callWebhook(path);

	const overdue = sim.data.invoices().filter((invoice) => invoice.status === 'overdue');
	expect(overdue.length).toBeGreaterThan(3);
	expect(first.status).toBe(200);
	expect(first.body).toMatchObject({ page: 2, pageSize: 3, totalItems: overdue.length });
	const items = (first.body as { items: Array<{ invoiceNumber: string; status: string }> }).items;
	expect(items.length).toBe(Math.min(3, overdue.length - 3));
	expect(items.every((invoice) => invoice.status === 'overdue')).toBe(true);

	// The token came from the credential's preAuthentication: one token request by this client,
	// then the list request authorised by that client's bearer token.
	expect(tokenRequests()).toBe(1);
	const [listed] = listRequests();
	expect(listed).toMatchObject({
		status: 200,
		query: { status: 'overdue', page: '2', pageSize: '3' },
	});
	expect(listed.clientId).toBe(clientId);
	const execution = await finishedExecution(id);
	expect(execution.status).toBe('success');
	expectNoSecret(execution, sim.secrets(), 'the execution data');

	// A second run reuses the stored token.
	expect((await callWebhook(path)).status).toBe(200);
	expect(tokenRequests()).toBe(1);
	expect(listRequests()).toHaveLength(2);

	// An hour later the token has expired: the service refuses it once, n8n runs preAuthentication
	// again and retries with the new token.
	sim.clock.advance(61 * MINUTE);
	expect((await callWebhook(path)).status).toBe(200);
	expect(tokenRequests()).toBe(2);
	expect(listRequests().map((entry) => entry.status)).toEqual([200, 200, 401, 200]);

	await unpublish(id);
});

test('the new-invoice example imports, publishes one subscription, runs once on an issued invoice and fetches every billed asset', async () => {
	const workflow = loadExample(EXAMPLES.newInvoice, credential);
	const webhookId = String(workflow.nodes.find((node) => node.webhookId)?.webhookId);
	const ours = () =>
		sim.subscriptions
			.list()
			.filter((subscription) => subscription.notificationUrl.includes(webhookId));
	const id = await createWorkflow(workflow);
	const imported = await n8n.api<{ nodes: INode[] }>('GET', `/workflows/${id}`);
	expect(imported.body.nodes.map((node) => node.name)).toEqual(
		workflow.nodes.map((node) => node.name),
	);

	await publish(id);
	await waitFor('the subscription', () => ours().length === 1);
	expect(ours()[0].eventTypes).toEqual(['invoice.issued']);

	const [first, second] = sim.data.assets();
	const { invoice } = sim.issueInvoice({
		customerNumber: first.customerNumber,
		lines: [
			{
				assetId: first.assetId,
				description: 'Managed service',
				quantity: 1,
				unitPrice: 100,
				amount: 100,
			},
			{
				assetId: second.assetId,
				description: 'Managed service',
				quantity: 2,
				unitPrice: 50,
				amount: 100,
			},
		],
	});
	const execution = await finishedExecution(id);
	expect(execution.status).toBe('success');
	expect(outputOf(execution, 'Get Invoice')).toEqual([
		expect.objectContaining({ invoiceNumber: invoice.invoiceNumber }),
	]);
	expect(outputOf(execution, 'Get Managed Asset').map((asset) => asset.assetId)).toEqual([
		first.assetId,
		second.assetId,
	]);

	await unpublish(id);
	await waitFor('no subscription', () => ours().length === 0);
});

test("the overdue-report example imports and publishes; its nodes, run once, give the simulator's count and total per currency", async () => {
	const workflow = loadExample(EXAMPLES.overdueReport, credential);
	const id = await createWorkflow(workflow);
	await publish(id);
	const status = await waitFor('the schedule to be published', async () => {
		const answer = await n8n.rest<{ data: { status: string } }>(
			'GET',
			`/workflows/${id}/publication-status`,
		);
		return ['published', 'failed'].includes(answer.body.data?.status)
			? answer.body.data.status
			: undefined;
	});
	expect(status).toBe('published');
	await unpublish(id);

	// The same nodes after a Webhook instead of the morning schedule, to run them now.
	const [schedule, ...rest] = workflow.nodes;
	expect(schedule.type).toBe('n8n-nodes-base.scheduleTrigger');
	const path = `overdue-report-${randomUUID().slice(0, 8)}`;
	const runNow = await createWorkflow(webhookWorkflow('Overdue report, now', path, rest, true));
	await publish(runNow);
	const answer = await callWebhook(path);
	expect(answer.status).toBe(200);

	const expected = new Map<string, { count: number; total: number }>();
	for (const invoice of sim.data.invoices().filter((entry) => entry.status === 'overdue')) {
		const entry = expected.get(invoice.currency) ?? { count: 0, total: 0 };
		entry.count += 1;
		entry.total += invoice.totalAmount;
		expected.set(invoice.currency, entry);
	}
	const rows = answer.body as Array<{
		currency: string;
		count_invoiceNumber: number;
		sum_totalAmount: number;
	}>;
	expect(rows.map((row) => row.currency).sort()).toEqual([...expected.keys()].sort());
	for (const row of rows) {
		expect(row.count_invoiceNumber).toBe(expected.get(row.currency)?.count);
		expect(row.sum_totalAmount).toBeCloseTo(expected.get(row.currency)?.total ?? NaN, 2);
	}
	await unpublish(runNow);
});
