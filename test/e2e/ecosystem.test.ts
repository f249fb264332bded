/**
 * The package among n8n's own parts, in a real n8n 2.41.1 over HTTPS:
 *
 * - n8n lists the action node's AI-tool variant (`usableAsTool`).
 * - n8n's core HTTP Request node uses the credential as a predefined credential type, for an
 *   endpoint the action node does not offer (one chosen page of a filtered invoice list): the token
 *   comes from the credential's preAuthentication, the request carries it as a bearer token, the
 *   next run reuses it, and an expired token is renewed once.
 * - The README's example workflows (docs/examples/*.json) import through the public API; the
 *   new-invoice one runs once on an issued invoice and gets its assets in one node (Include Billed
 *   Assets), the same assets as the four-node way (Split Out, Managed Asset Get), and a deleted
 *   asset as null with its reason; the overdue report's nodes produce the simulator's own totals;
 *   the overdue reminder composes one reminder per invoice marked overdue, none for a paid one.
 */
import { randomUUID } from 'node:crypto';
import type { INode } from 'n8n-workflow';
import { request } from 'undici';

import { paths } from '../../nodes/InvoicingAssets/transport/contract';
import { expectNoSecret } from '../harness/secrets';
import { subscriptionsOfHook } from '../harness/test-data';
import { createCredential } from '../n8n/credentials';
import { EXAMPLES, loadExample } from '../n8n/examples';
import {
	getExecution,
	nodeOutput,
	waitFor,
	waitForEvent,
	waitForExecutions,
	type Execution,
} from '../n8n/executions';
import { N8nInstance } from '../n8n/instance';
import { disposePackedPackage, PACKAGE_NAME } from '../n8n/package';
import { startSimulator, type Simulator } from '../simulator';
import {
	ACTION_TYPE,
	CREDENTIAL_TYPE,
	FOUR_NODE_NAMES,
	fourNodeInvoiceAssetsWorkflow,
	inLine,
	type WorkflowJson,
} from './workflows';

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
		connections: inLine(chain),
	};
}

beforeAll(async () => {
	sim = await startSimulator({ invoices: 60, assets: 20 });
	n8n = new N8nInstance({ name: 'ecosystem' });
	await n8n.start();
	credential = await createCredential(n8n, sim, 'Invoicing & Assets account');
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

test('the new-invoice example imports, publishes one subscription and, run on an issued invoice, gets the invoice with each billed asset in one node, as the four-node way does; a deleted asset is null with its reason', async () => {
	const workflow = loadExample(EXAMPLES.newInvoice, credential);
	const [trigger, getInvoice] = workflow.nodes;
	expect(getInvoice.parameters.options).toMatchObject({ includeBilledAssets: true });
	const subscriptionsOf = (webhookId: string) => subscriptionsOfHook(sim, webhookId);
	const id = await createWorkflow(workflow);
	const imported = await n8n.api<{ nodes: INode[] }>('GET', `/workflows/${id}`);
	expect(imported.body.nodes.map((node) => node.name)).toEqual(
		workflow.nodes.map((node) => node.name),
	);
	await publish(id);
	await waitFor('the subscription', () => subscriptionsOf(String(trigger.webhookId)).length === 1);
	expect(subscriptionsOf(String(trigger.webhookId))[0].eventTypes).toEqual(['invoice.issued']);

	// The same automation in four nodes, published beside it, sees the same invoice.
	const fourNodeWebhook = randomUUID();
	const fourNode = await createWorkflow(fourNodeInvoiceAssetsWorkflow(credential, fourNodeWebhook));
	await publish(fourNode);
	await waitFor('the four-node subscription', () => subscriptionsOf(fourNodeWebhook).length === 1);

	const [first, second, third] = sim.data.assets();
	const line = (assetId: string | null) => ({
		assetId,
		description: 'Managed service',
		quantity: 1,
	});
	const { invoice } = sim.issueInvoice({
		customerNumber: first.customerNumber,
		lines: [line(second.assetId), line(null), line(first.assetId), line(second.assetId)],
	});
	const execution = await finishedExecution(id);
	expect(execution.status).toBe('success');
	const [withAssets] = outputOf(execution, getInvoice.name) as Array<{
		invoiceNumber: string;
		assetIds: string[];
		assets: Array<Record<string, unknown> | null>;
		missingAssets: unknown[];
	}>;
	expect(withAssets).toMatchObject({
		invoiceNumber: invoice.invoiceNumber,
		assetIds: [second.assetId, first.assetId],
		missingAssets: [],
	});
	expect(withAssets.assets.map((asset) => asset?.assetId)).toEqual(withAssets.assetIds);

	const fourNodeRun = await finishedExecution(fourNode);
	expect(fourNodeRun.status).toBe('success');
	const fetchedOneByOne = outputOf(fourNodeRun, FOUR_NODE_NAMES.asset);
	expect(fetchedOneByOne.map((asset) => asset.assetId)).toEqual(withAssets.assetIds);
	for (const [index, asset] of withAssets.assets.entries()) {
		expect(fetchedOneByOne[index]).toMatchObject(asset as Record<string, unknown>);
	}
	await unpublish(fourNode);
	await waitFor('no four-node subscription', () => subscriptionsOf(fourNodeWebhook).length === 0);

	// An asset deleted at the service: the invoice still comes, the asset is null with its reason.
	expect(sim.deleteAsset(second.assetId)).toBe(true);
	const { invoice: later } = sim.issueInvoice({
		customerNumber: first.customerNumber,
		lines: [line(second.assetId), line(third.assetId)],
	});
	const laterRun = await finishedExecution(id, 2);
	expect(laterRun.status).toBe('success');
	expect(outputOf(laterRun, getInvoice.name)).toEqual([
		expect.objectContaining({
			invoiceNumber: later.invoiceNumber,
			assets: [null, expect.objectContaining({ assetId: third.assetId })],
			missingAssets: [
				{
					assetId: second.assetId,
					reason: `Managed asset '${second.assetId}' was not found (HTTP 404)`,
				},
			],
		}),
	]);

	await unpublish(id);
	await waitFor('no subscription', () => subscriptionsOf(String(trigger.webhookId)).length === 0);
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

test('the overdue-reminder example subscribes to invoice.overdue and composes one reminder for an invoice marked overdue, its repeated delivery ignored; none once the invoice is paid', async () => {
	const workflow = loadExample(EXAMPLES.overdueReminder, credential);
	const [trigger, getInvoice, stillOverdue, compose] = workflow.nodes;
	const webhookId = String(trigger.webhookId);
	const id = await createWorkflow(workflow);
	await publish(id);
	await waitFor('the subscription', () => subscriptionsOfHook(sim, webhookId).length === 1);
	expect(subscriptionsOfHook(sim, webhookId)[0].eventTypes).toEqual(['invoice.overdue']);

	// The service delivers the event twice: the trigger lets it in once.
	const { invoice: issued } = sim.issueInvoice();
	sim.deliveries.setOptions({ duplicate: true });
	const overdue = sim.markInvoiceOverdue(issued.invoiceNumber);
	expect((await overdue.event.done).map((outcome) => outcome.lastStatus)).toEqual([200, 200]);
	sim.deliveries.setOptions({ duplicate: false });
	const first = await waitForEvent(n8n, id, trigger.name, overdue.event.eventId);
	const [reminded] = first.get(overdue.event.eventId) ?? [];
	expect(reminded.status).toBe('success');
	const { invoice } = overdue;
	expect(outputOf(reminded, compose.name)).toEqual([
		{
			invoiceNumber: invoice.invoiceNumber,
			customerNumber: invoice.customerNumber,
			subject: `Payment reminder: invoice ${invoice.invoiceNumber}`,
			message: `Invoice ${invoice.invoiceNumber} of ${invoice.totalAmount} ${invoice.currency} was due on ${String(invoice.dueDate).slice(0, 10)} and is still open. Please pay it at your earliest convenience.`,
		},
	]);

	// Paid meanwhile, a late overdue event for it (a retry after a restart, say) composes nothing;
	// its execution, the last, also shows that the repeated delivery started none.
	sim.payInvoice(invoice.invoiceNumber);
	const late = sim.emitEvent('invoice.overdue', { ...overdue.event.data });
	await late.done;
	const all = await waitForEvent(n8n, id, trigger.name, late.eventId);
	expect([...all.keys()].sort()).toEqual([overdue.event.eventId, late.eventId].sort());
	expect(all.get(overdue.event.eventId)).toHaveLength(1);
	const [paidRun] = all.get(late.eventId) ?? [];
	expect(paidRun.status).toBe('success');
	expect(outputOf(paidRun, getInvoice.name)).toEqual([
		expect.objectContaining({ invoiceNumber: invoice.invoiceNumber, status: 'paid' }),
	]);
	expect(outputOf(paidRun, stillOverdue.name)).toEqual([]);
	expect(paidRun.data?.resultData.runData[compose.name]).toBeUndefined();
	expectNoSecret([reminded, paidRun], sim.secrets(), 'the execution data');

	await unpublish(id);
	await waitFor('no subscription', () => subscriptionsOfHook(sim, webhookId).length === 0);
});
