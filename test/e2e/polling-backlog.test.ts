/**
 * A month-end burst in one second, larger than one poll's budget, in a real n8n 2.41.1: n8n's
 * durable scheduler with durable cursors and a 10 s poll timeout (a budget of 5 s) drains it over
 * several polls, each change once, across a restart in the middle, and reads it once more when it
 * is 5 minutes old without reporting anything again; then the same n8n on its legacy scheduler,
 * where a poll longer than the poll period overlaps the next, and a restart in the middle of a
 * poll. The service answers each list request after 1,000 ms (or 1,500 ms).
 */
import { getExecution, listExecutions, nodeOutput, waitFor } from '../n8n/executions';
import { N8nInstance } from '../n8n/instance';
import { afterOneMorePoll, DURABLE_SCHEDULER, pollEvery } from '../n8n/polling';
import { disposePackedPackage } from '../n8n/package';
import { startSimulator, type Simulator } from '../simulator';
import { CREDENTIAL_TYPE, POLLING_NODE_NAME, pollingWorkflow } from './workflows';

jest.setTimeout(15 * 60_000);

const ABANDONED = 'Poll exceeded its timeout and was abandoned';
const DRAIN_WAIT_MS = 4 * 60_000;

let sim: Simulator;
let n8n: N8nInstance;
let credential: { id: string; name: string };

beforeAll(async () => {
	sim = await startSimulator({ invoices: 20, assets: 10 });
	n8n = new N8nInstance({ name: 'e2e-polling-backlog', env: DURABLE_SCHEDULER });
	await n8n.start();
	const created = await n8n.api<{ id: string; name: string }>('POST', '/credentials', {
		name: 'Invoicing & Assets (backlog)',
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
	if (created.status !== 200) throw new Error(`credential: ${created.status} ${created.text}`);
	credential = created.body;
});

afterAll(async () => {
	await n8n?.dispose();
	await sim?.close();
	disposePackedPackage();
});

/** The first page of each follow read: one per poll that read on from its cursor. */
function followReads(): number {
	return sim.log
		.entries({ route: 'invoices.list', status: 200 })
		.filter(
			(entry) =>
				entry.query.page === '1' &&
				entry.query.pageSize === '100' &&
				entry.query.updatedFrom !== undefined &&
				entry.query.updatedTo === undefined,
		).length;
}

/**
 * Publishes a polling workflow (a poll every `seconds`) and waits for `baselines` baselines (the
 * one-record request of each) and a poll after the last: on n8n 2.41's durable scheduler the
 * scheduled polls do not go on from the publishing poll's position, so the first scheduled one
 * takes the baseline again (docs/choosing-a-trigger.md).
 */
async function publish(seconds: number, baselines: number): Promise<string> {
	const created = await n8n.api<{ id: string }>(
		'POST',
		'/workflows',
		pollingWorkflow(credential, ['invoice.issued', 'invoice.paid'], pollEvery(seconds)),
	);
	expect(created.status).toBe(200);
	const baselineReads = () =>
		sim.log
			.entries({ route: 'invoices.list', status: 200 })
			.filter((entry) => entry.query.pageSize === '1');
	const before = baselineReads().length;
	expect((await n8n.api('POST', `/workflows/${created.body.id}/publish`)).status).toBe(200);
	await waitFor('the baselines', () => baselineReads().length >= before + baselines, 60_000, 250);
	const follows = followReads();
	await waitFor('a poll after the baseline', () => followReads() > follows, 60_000, 250);
	return created.body.id;
}

/** `count` invoices issued within one second of the service's time: their eventIds. */
function burst(count: number): Set<string> {
	const expected = new Set<string>();
	for (let index = 0; index < count; index++) {
		expected.add(`invoice.issued:${sim.issueInvoice().invoice.invoiceNumber}`);
	}
	return expected;
}

/** The eventIds of each execution of the workflow that carried items, oldest first. */
async function reportedPerExecution(workflowId: string): Promise<string[][]> {
	const listed = await listExecutions(n8n, workflowId);
	const executions = await Promise.all(
		listed.map(async (entry) => await getExecution(n8n, entry.id)),
	);
	return executions
		.reverse()
		.map((execution) =>
			nodeOutput(execution, POLLING_NODE_NAME).map((item) => String(item.json.eventId)),
		)
		.filter((ids) => ids.length > 0);
}

async function waitForAll(workflowId: string, expected: Set<string>): Promise<string[][]> {
	return await waitFor(
		`${expected.size} changes reported`,
		async () => {
			const perExecution = await reportedPerExecution(workflowId);
			return perExecution.flat().length >= expected.size ? perExecution : undefined;
		},
		DRAIN_WAIT_MS,
		2000,
	);
}

/** One more poll must report nothing again (a sentinel change after it shows that it ended). */
async function nothingTwice(workflowId: string, expected: Set<string>) {
	await afterOneMorePoll(n8n, {
		workflowId,
		triggerNode: POLLING_NODE_NAME,
		polls: followReads,
		change: () => {
			const id = `invoice.issued:${sim.issueInvoice().invoice.invoiceNumber}`;
			expected.add(id);
			return id;
		},
		timeoutMs: DRAIN_WAIT_MS,
	});
	const ids = (await reportedPerExecution(workflowId)).flat();
	expect(ids.length).toBe(new Set(ids).size);
	expect(new Set(ids)).toEqual(expected);
}

test('on the durable scheduler with a 5 s poll budget, a burst of 2,000 changes in one second comes over several polls, each once, across a restart, and is settled without a repeat', async () => {
	const workflowId = await publish(10, 2);
	const expected = burst(2000);
	sim.faults.add({ route: 'invoices.list', latencyMs: 1000 });
	await waitFor(
		'the first polled changes',
		async () => ((await reportedPerExecution(workflowId)).length > 0 ? true : undefined),
		DRAIN_WAIT_MS,
		1000,
	);
	await n8n.restart();
	const perExecution = await waitForAll(workflowId, expected);
	expect(perExecution.length).toBeGreaterThan(1);
	expect(Math.max(...perExecution.map((ids) => ids.length))).toBeLessThan(expected.size);
	expect(n8n.log()).not.toContain(ABANDONED);
	// 6 minutes on, the burst can no longer be listed late: the polls read it once more (settle).
	sim.clock.advance(6 * 60_000);
	const settleReads = () =>
		sim.log
			.entries({ route: 'invoices.list', status: 200 })
			.filter((entry) => entry.query.updatedTo !== undefined && Number(entry.query.page) >= 20)
			.length;
	const settled = settleReads();
	await waitFor('the burst read once more', () => settleReads() > settled, DRAIN_WAIT_MS, 1000);
	await nothingTwice(workflowId, expected);
	expect(n8n.log()).not.toContain(ABANDONED);
	sim.faults.clear();
	expect((await n8n.api('POST', `/workflows/${workflowId}/unpublish`)).status).toBe(200);
});

test('on the legacy scheduler, polls that overlap report a burst in one second once each, across a restart', async () => {
	await n8n.stop();
	// Debug logs name each poll n8n starts, also one the trigger skips as it overlaps another.
	n8n.setEnv({
		...Object.fromEntries(Object.keys(DURABLE_SCHEDULER).map((name) => [name, undefined])),
		N8N_LOG_LEVEL: 'debug',
	});
	await n8n.start();
	const workflowId = await publish(5, 1);
	const expected = burst(1500);
	// 15 pages at 1,500 ms, 4 at a time: a poll takes longer than the 5 s between polls.
	sim.faults.add({ route: 'invoices.list', latencyMs: 1500 });
	const firstSeq = sim.log.entries().at(-1)?.seq ?? 0;
	await waitFor(
		'the backlog polled',
		async () => ((await reportedPerExecution(workflowId)).length > 0 ? true : undefined),
		DRAIN_WAIT_MS,
		500,
	);
	// The long poll: its requests, from its first page to its last.
	const longPoll = sim.log
		.entries({ route: 'invoices.list' })
		.filter((entry) => entry.seq > firstSeq);
	const pollStarts = startedPolls(n8n.log());
	const overlapping = pollStarts.filter(
		(at) => at > longPoll[0].receivedAtMs + 100 && at < (longPoll.at(-1)?.receivedAtMs ?? 0),
	);
	expect(overlapping.length).toBeGreaterThan(0);

	await n8n.stop();
	for (let index = 0; index < 20; index++) {
		expected.add(`invoice.issued:${sim.issueInvoice().invoice.invoiceNumber}`);
	}
	await n8n.start();
	await waitForAll(workflowId, expected);
	await nothingTwice(workflowId, expected);
	sim.faults.clear();
});

/** When n8n started each poll (epoch ms), from its debug log's times of day. */
function startedPolls(log: string): number[] {
	const today = new Date();
	return [...log.matchAll(/^(\d\d):(\d\d):(\d\d)\.(\d{3}).*Poll trigger initiated/gm)].map(
		(match) =>
			new Date(today).setHours(
				Number(match[1]),
				Number(match[2]),
				Number(match[3]),
				Number(match[4]),
			),
	);
}
