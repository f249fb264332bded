/**
 * The Polling Trigger in a real n8n 2.41.1, in the example workflow docs/examples/
 * poll-new-and-paid-invoices.json (trigger → Invoice Get, nothing in between): published
 * on Poll Times of one entry per 10 s of the minute (test/n8n/polling.ts; the example's Every
 * Minute polls in `npm run reliability`), it takes a baseline, then starts the workflow for
 * invoices issued and paid at the simulator, each change once, and goes on after an n8n restart
 * without losing or repeating one. Changes made while n8n is down come with the restart's first
 * poll.
 */
import {
	getExecution,
	listExecutions,
	nodeOutput,
	waitFor,
	type Execution,
} from '../n8n/executions';
import { N8nInstance } from '../n8n/instance';
import { EXAMPLES, loadExample } from '../n8n/examples';
import { afterOneMorePoll, pollEvery, pollRequests, withPollTimes } from '../n8n/polling';
import { settledPublication } from '../n8n/publication';
import { disposePackedPackage } from '../n8n/package';
import { startSimulator, type Simulator } from '../simulator';
import { CREDENTIAL_TYPE } from './workflows';

const TRIGGER_NAME = 'New or Paid Invoice';

jest.setTimeout(15 * 60_000);

const POLL_SECONDS = 10;

/** Several polls, plus time for the execution to end. */
const POLL_WAIT_MS = 90_000;

let sim: Simulator;
let n8n: N8nInstance;
let workflowId: string;
const expected: string[] = [];
let unpaid = '';

beforeAll(async () => {
	sim = await startSimulator({ invoices: 20, assets: 10 });
	n8n = new N8nInstance({ name: 'e2e-polling' });
	await n8n.start();
});

afterAll(async () => {
	await n8n?.dispose();
	await sim?.close();
	disposePackedPackage();
});

/** The eventIds of every item the trigger gave, over all ended executions. */
async function reportedEventIds(): Promise<{ ids: string[]; executions: Execution[] }> {
	const list = await listExecutions(n8n, workflowId);
	const executions = await Promise.all(
		list.map(async (entry) => await getExecution(n8n, entry.id)),
	);
	const ids = executions.flatMap((execution) =>
		nodeOutput(execution, TRIGGER_NAME).map((item) => String(item.json.eventId)),
	);
	return { ids, executions };
}

async function waitForReported(count: number) {
	return await waitFor(
		`${count} reported changes`,
		async () => {
			const reported = await reportedEventIds();
			return reported.ids.length >= count ? reported : undefined;
		},
		POLL_WAIT_MS,
		2000,
	);
}

function issue(): string {
	const number = sim.issueInvoice().invoice.invoiceNumber;
	expected.push(`invoice.issued:${number}`);
	return number;
}

function pay(number: string) {
	sim.payInvoice(number);
	expected.push(`invoice.paid:${number}`);
}

test('published, the example workflow takes its baseline at once', async () => {
	sim.issueInvoice(); // before publishing: never reported
	const credential = await n8n.api<{ id: string; name: string }>('POST', '/credentials', {
		name: 'Invoicing & Assets (polling)',
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
	expect(credential.status).toBe(200);
	const created = await n8n.api<{ id: string }>(
		'POST',
		'/workflows',
		withPollTimes(
			loadExample(EXAMPLES.pollInvoices, { id: credential.body.id, name: credential.body.name }),
			pollEvery(POLL_SECONDS),
		),
	);
	expect(created.status).toBe(200);
	workflowId = created.body.id;
	sim.log.reset();
	expect((await n8n.api('POST', `/workflows/${workflowId}/publish`)).status).toBe(200);
	// The baseline poll is part of the registration: published means it is done.
	expect((await settledPublication(n8n, workflowId)).status).toBe('published');
	expect(pollRequests(sim).length).toBeGreaterThanOrEqual(1);
	// That the baseline started nothing (the invoice above is never reported) is proven by the
	// next test's exact set, once later changes have come through.
});

test('invoices issued and paid at the service start the workflow once per change, and nothing from before publishing', async () => {
	const first = issue();
	unpaid = issue();
	pay(first);
	const { ids } = await waitForReported(expected.length);
	expect([...ids].sort()).toEqual([...expected].sort());
	const items = (await reportedEventIds()).executions.flatMap((execution) =>
		nodeOutput(execution, TRIGGER_NAME).map((item) => item.json),
	);
	expect(items.find((item) => item.eventId === `invoice.paid:${first}`)).toMatchObject({
		eventType: 'invoice.paid',
		subscriptionId: null,
		data: { invoiceNumber: first, status: 'paid' },
	});
	// Every item went on to Invoice Get.
	const fetched = (await reportedEventIds()).executions.flatMap((execution) =>
		nodeOutput(execution, 'Get Invoice').map((item) => String(item.json.invoiceNumber)),
	);
	expect(fetched.sort()).toEqual(
		items.map((item) => String((item.data as { invoiceNumber: string }).invoiceNumber)).sort(),
	);
});

test('after an n8n restart, changes made while it was down and after it come once each', async () => {
	const before = expected.length;
	await n8n.stop();
	issue();
	pay(unpaid);
	await n8n.start();
	await waitForReported(before + 2);
	issue();
	const { ids } = await waitForReported(expected.length);
	expect(ids.length).toBe(expected.length);
	// One more poll must report nothing again: run it to its end (a new invoice after it is the
	// sentinel whose execution shows that it has), then every change came exactly once.
	const executions = await afterOneMorePoll(n8n, {
		workflowId,
		triggerNode: TRIGGER_NAME,
		polls: () => pollRequests(sim).length,
		change: () => `invoice.issued:${issue()}`,
		timeoutMs: POLL_WAIT_MS,
	});
	const after = executions.flatMap((execution) =>
		nodeOutput(execution, TRIGGER_NAME).map((item) => String(item.json.eventId)),
	);
	expect([...after].sort()).toEqual([...expected].sort());
	expect(executions.every((execution) => execution.status === 'success')).toBe(true);
});
