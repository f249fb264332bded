/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/**
 * The end-to-end scenario on n8n's queue mode: one main process (API, trigger registration),
 * two workers (executions) and one webhook process (deliveries), sharing Redis and PostgreSQL,
 * each with the packed package installed. At full size a single n8n instance runs the same
 * workflow and load first, so that the throughput figures compare runs on the same machine at the
 * same time.
 *
 * Sizes (env): QUEUE_DELIVERIES (genuine deliveries, 200), QUEUE_LOAD_CONCURRENCY (events in
 * flight at once, 20). `.ci/run` runs a smaller version (40), without the single-instance
 * comparison, which only gives figures. The figures are printed at the end.
 */
import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';

import { DELIVERY_KEY_PARAMETER } from '../../nodes/InvoicingAssets/transport/contract';
import {
	NODE_NAMES,
	invoiceToAssetWorkflow,
	POLLING_NODE_NAME,
	pollingWorkflow,
} from '../e2e/workflows';
import { expectNoSecret } from '../harness/secrets';
import { issueInvoiceBillingAnAsset as issueAnInvoice } from '../harness/test-data';
import { createCredential } from '../n8n/credentials';
import {
	getExecution,
	hasEnded,
	listExecutions,
	waitFor,
	waitForEvent,
	waitForExecutions,
	type Execution,
} from '../n8n/executions';
import { N8nInstance } from '../n8n/instance';
import { disposePackedPackage } from '../n8n/package';
import {
	afterOneMorePoll,
	groupPolls,
	overlappingWindows,
	pollEvery,
	pollRequests,
} from '../n8n/polling';
import { settledPublication } from '../n8n/publication';
import { processGroupOf, processOfLocalPort } from '../n8n/socket-owner';
import {
	startSimulator,
	type ArrivingRequest,
	type DeliveryOutcome,
	type Simulator,
} from '../simulator';
import { QueueCluster } from './cluster';
import { cpuSecondsOfGroups } from './cpu';
import {
	createEventsTable,
	createRecipeCredentials,
	didTheWork,
	exactlyOnceRecipe,
	itemsOut,
	publishRecipe,
	RECIPE_NODES,
} from './recipes';

jest.setTimeout(20 * 60_000);

const MINUTE = 60_000;

function sizeFromEnv(name: string, fallback: number): number {
	const value = Number(process.env[name]);
	return Number.isInteger(value) && value > 0 ? value : fallback;
}

const FULL_DELIVERIES = 200;
const DELIVERIES = sizeFromEnv('QUEUE_DELIVERIES', FULL_DELIVERIES);
/** The single-instance comparison gives figures only: run at full size. */
const COMPARE_SINGLE = DELIVERIES >= FULL_DELIVERIES;
const CONCURRENCY = sizeFromEnv('QUEUE_LOAD_CONCURRENCY', 20);

let sim: Simulator;
let single: N8nInstance | undefined;
let cluster: QueueCluster | undefined;
let workflowId: string;
const webhookId = randomUUID();
const figures: string[] = [];
interface LoadFigures {
	perSecond: number;
	cpuMsPerDelivery: number;
}
const rates: { single?: LoadFigures; queue?: LoadFigures } = {};

/** Runs the genuine-delivery load against `instance`'s workflow and measures it. */
async function measuredLoad(instance: N8nInstance, id: string, groups: () => number[]) {
	const before = await listExecutions(instance, id);
	const tokensBefore = sim.log.tokensIssued();
	const cpuBefore = cpuSecondsOfGroups(groups());
	const { startedAt, outcomes } = await deliverLoad(DELIVERIES, CONCURRENCY);
	expectAllDelivered(outcomes, DELIVERIES);
	const runs = await newExecutions(instance, id, before, DELIVERIES);
	const cpuSeconds = cpuSecondsOfGroups(groups()) - cpuBefore;
	const { seconds, perSecond } = throughput(startedAt, runs);
	const cpuMsPerDelivery = (cpuSeconds * 1000) / DELIVERIES;
	const summary = `${DELIVERIES} deliveries → ${runs.filter((entry) => entry.status === 'success').length} successful executions in ${seconds.toFixed(1)} s = ${perSecond.toFixed(2)} deliveries/s; CPU ${cpuSeconds.toFixed(1)} s = ${cpuMsPerDelivery.toFixed(0)} ms per delivery; load average ${loadavg()[0].toFixed(1)}; token exchanges ${sim.log.tokensIssued() - tokensBefore}`;
	return { runs, figures: { perSecond, cpuMsPerDelivery }, summary };
}

function figure(line: string) {
	figures.push(line);
	process.stdout.write(`[queue figures] ${line}\n`);
}

function queue(): QueueCluster {
	if (!cluster) throw new Error('the queue-mode cluster is not running');
	return cluster;
}

function subscriptionsOf(id: string) {
	return sim.subscriptions
		.list()
		.filter((subscription) => subscription.notificationUrl.includes(id));
}

/**
 * Who sent each subscription create and delete: the process holding the request's source port
 * when it arrived (test/n8n/socket-owner.ts), named by the n8n process group it belongs to.
 */
const subscriptionCalls: Array<{ route: string; sender: string }> = [];

function senderOf(remotePort: number | null): string {
	const pid = remotePort === null ? undefined : processOfLocalPort(remotePort);
	if (pid === undefined) return 'unknown';
	const group = processGroupOf(pid);
	const named: Array<[string, N8nInstance | undefined]> = [
		['baseline', single],
		['main', cluster?.main],
		...(cluster?.workers ?? []).map((worker, index): [string, N8nInstance] => [
			`worker${index + 1}`,
			worker,
		]),
		...(cluster?.webhooks ?? []).map((webhook, index): [string, N8nInstance] => [
			`webhook${index + 1}`,
			webhook,
		]),
	];
	return named.find(([, instance]) => instance?.pid === group)?.[0] ?? `pid ${pid}`;
}

/** Who sent each invoice list request (the Polling Trigger's polls), by its source port. */
const listSenders = new Map<number, string>();

function recordSubscriptionCall(arriving: ArrivingRequest) {
	if (arriving.route === 'invoices.list' && arriving.remotePort !== null) {
		listSenders.set(arriving.remotePort, senderOf(arriving.remotePort));
	}
	if (arriving.route !== 'subscriptions.create' && arriving.route !== 'subscriptions.delete')
		return;
	subscriptionCalls.push({ route: arriving.route, sender: senderOf(arriving.remotePort) });
}

/** The senders of the subscription calls on `route` from index `from` of subscriptionCalls on. */
function sendersSince(from: number, route: string): string[] {
	return subscriptionCalls
		.slice(from)
		.filter((call) => call.route === route)
		.map((call) => call.sender);
}

let assetCursor = 0;

/** An invoice billing the next asset in turn, so that the executions fetch different assets. */
function issueInvoiceBillingAnAsset() {
	const assets = sim.data.assets();
	return issueAnInvoice(sim, assets[assetCursor++ % assets.length]);
}

/**
 * Issues `count` invoices, keeping `concurrency` events in flight (each is delivered by the
 * simulator to every subscription).
 */
async function deliverLoad(
	count: number,
	concurrency: number,
): Promise<{ startedAt: number; outcomes: DeliveryOutcome[] }> {
	const startedAt = Date.now();
	const outcomes: DeliveryOutcome[] = [];
	let issued = 0;
	const lane = async () => {
		while (issued < count) {
			issued++;
			const { event } = issueInvoiceBillingAnAsset();
			outcomes.push(...(await event.done));
		}
	};
	await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
	return { startedAt, outcomes };
}

/** The executions that are not in `before`, once `count` of them have finished. */
async function newExecutions(
	instance: N8nInstance,
	id: string,
	before: Execution[],
	count: number,
): Promise<Execution[]> {
	const known = new Set(before.map((entry) => entry.id));
	const list = await waitForExecutions(instance, id, before.length + count, 10 * MINUTE);
	return list.filter((entry) => !known.has(entry.id));
}

/** Deliveries per second from the first issued event to the last execution's end. */
function throughput(startedAt: number, runs: Execution[]) {
	const lastStop = Math.max(...runs.map((entry) => Date.parse(entry.stoppedAt ?? '')));
	const seconds = (lastStop - startedAt) / 1000;
	return { seconds, perSecond: runs.length / seconds };
}

/** Creates the credential and the workflow on `instance`, tests the credential, publishes. */
async function publishWorkflow(instance: N8nInstance, hookId: string) {
	const reference = await createCredential(instance, sim, 'Invoicing & Assets account');
	const tested = await instance.api<{ status: string }>(
		'POST',
		`/credentials/${reference.id}/test`,
	);
	expect(tested.body).toMatchObject({ status: 'OK' });
	const workflow = await instance.api<{ id: string }>(
		'POST',
		'/workflows',
		invoiceToAssetWorkflow(reference, hookId),
	);
	expect(workflow.status).toBe(200);
	expect((await instance.api('POST', `/workflows/${workflow.body.id}/publish`)).status).toBe(200);
	const [subscription] = await waitFor(
		'the subscription',
		() => (subscriptionsOf(hookId).length === 1 ? subscriptionsOf(hookId) : undefined),
		2 * MINUTE,
	);
	return { credential: reference, workflowId: workflow.body.id, subscription };
}

function expectAllDelivered(outcomes: DeliveryOutcome[], count: number) {
	const delivered = outcomes.filter(
		(outcome) => outcome.result === 'delivered' && outcome.lastStatus === 200,
	);
	expect({ delivered: delivered.length, other: outcomes.length - delivered.length }).toEqual({
		delivered: count,
		other: 0,
	});
}

/** Which worker ran each execution, from the "Worker started execution <id>" log lines. */
function workerSplit(ids: string[]): Record<string, number> {
	const ranBy = new Map<string, string>();
	queue().workers.forEach((worker, index) => {
		for (const match of worker.log().matchAll(/Worker started execution (\d+)\b/g)) {
			ranBy.set(match[1], `worker${index + 1}`);
		}
	});
	const split: Record<string, number> = {};
	for (const worker of queue().workers.keys()) split[`worker${worker + 1}`] = 0;
	split.unknown = 0;
	for (const id of ids) split[ranBy.get(id) ?? 'unknown']++;
	return split;
}

function formatSplit(split: Record<string, number>) {
	return Object.entries(split)
		.filter(([name, count]) => name !== 'unknown' || count > 0)
		.map(([name, count]) => `${name} ${count}`)
		.join(', ');
}

/** The delivery key of our subscription, as the service holds it (for hand-made deliveries). */
function deliveryKey(): string {
	const [subscription] = subscriptionsOf(webhookId);
	return new URL(subscription.notificationUrl).searchParams.get(DELIVERY_KEY_PARAMETER) ?? '';
}

async function post(instance: N8nInstance, query: string, body: unknown) {
	const answer = await instance.http('POST', `/webhook/${webhookId}/webhook${query}`, {
		rawBody: JSON.stringify(body),
		headers: { 'content-type': 'application/json' },
	});
	return answer.status;
}

/**
 * Issues a genuine event and waits for its execution: the executions since `before` (with data)
 * by eventId, the sentinel's included. Anything delivered before it has been handled by then.
 */
async function afterSentinel(main: N8nInstance, before: Execution[]) {
	const { event } = issueInvoiceBillingAnAsset();
	expectAllDelivered(await event.done, 1);
	const since = await waitForEvent(main, workflowId, NODE_NAMES.trigger, event.eventId, {
		after: before,
		timeoutMs: 10 * MINUTE,
	});
	expect(since.get(event.eventId)?.map((execution) => execution.status)).toEqual(['success']);
	return since;
}

beforeAll(async () => {
	sim = await startSimulator({
		invoices: 40,
		assets: 30,
		delivery: { retrySchedule: [500, 1000, 2000, 4000], timeoutMs: 30_000 },
		onRequest: recordSubscriptionCall,
	});
	figure(
		`load: ${DELIVERIES} genuine deliveries, ${CONCURRENCY} events in flight at once, on ${cpus().length} cores`,
	);
});

afterAll(async () => {
	await single?.dispose();
	await cluster?.dispose();
	await sim?.close();
	disposePackedPackage();
	process.stdout.write(
		`\n=== queue mode figures ===\n${figures.map((line) => `  ${line}`).join('\n')}\n\n`,
	);
});

(COMPARE_SINGLE ? test : test.skip)(
	'baseline: a single n8n instance runs the same workflow and load',
	async () => {
		single = new N8nInstance({ name: 'queue-baseline' });
		await single.start();
		const hookId = randomUUID();
		const published = await publishWorkflow(single, hookId);
		const instance = single;
		const {
			runs,
			figures: measured,
			summary,
		} = await measuredLoad(instance, published.workflowId, () => [instance.pid ?? 0]);
		expect(runs.filter((entry) => entry.status === 'success')).toHaveLength(DELIVERIES);
		rates.single = measured;
		figure(`single instance: ${summary}`);

		expect((await single.api('POST', `/workflows/${published.workflowId}/unpublish`)).status).toBe(
			200,
		);
		await waitFor(
			'no subscription of the baseline',
			() => subscriptionsOf(hookId).length === 0,
			2 * MINUTE,
		);
		await single.dispose();
		single = undefined;
	},
);

test('queue mode: Redis, PostgreSQL, main, two workers and a webhook process start with the package on each', async () => {
	const started = Date.now();
	cluster = await QueueCluster.start({ workers: 2 });
	figure(
		`queue-mode cluster (Redis, PostgreSQL, main, 2 workers, 1 webhook process) up in ${((Date.now() - started) / 1000).toFixed(1)} s`,
	);
	for (const member of cluster.processes) expect(member.pid).toBeGreaterThan(0);
	for (const worker of cluster.workers) expect(worker.log()).toMatch(/n8n worker is now ready/);
	expect(cluster.webhooks[0].log()).toMatch(/Webhook listener waiting for requests/);
});

/** Index into subscriptionCalls where the queue-mode cluster's own calls begin. */
let clusterCallsFrom = 0;

test('publish → exactly one subscription, created by the main, whose URL is the webhook process', async () => {
	const { main, webhooks } = queue();
	const createsBefore = sim.log.count('subscriptions.create');
	clusterCallsFrom = subscriptionCalls.length;
	const published = await publishWorkflow(main, webhookId);
	workflowId = published.workflowId;

	// Registration done (n8n retries a failed create within it): one subscription, one create.
	expect((await settledPublication(main, workflowId)).status).toBe('published');
	expect(subscriptionsOf(webhookId)).toHaveLength(1);
	expect(sim.log.count('subscriptions.create') - createsBefore).toBe(1);
	// The process that held the create's connection is the main.
	expect(sendersSince(clusterCallsFrom, 'subscriptions.create')).toEqual(['main']);
	const url = new URL(published.subscription.notificationUrl);
	expect(url.origin).toBe(webhooks[0].url);
	expect(url.origin).not.toBe(main.url);
	expect(url.pathname).toBe(`/webhook/${webhookId}/webhook`);
	expect(url.searchParams.get(DELIVERY_KEY_PARAMETER)?.length).toBeGreaterThanOrEqual(32);

	// The main serves no production webhooks: deliveries can only go through the webhook process.
	expect(await post(main, `?${DELIVERY_KEY_PARAMETER}=${deliveryKey()}`, {})).toBe(404);
	figure(
		`publish: 1 subscription, notificationUrl on the webhook process (${url.origin}); the main answers 404 on /webhook/`,
	);
});

test(`${DELIVERIES} genuine deliveries → ${DELIVERIES} successful executions, spread over both workers`, async () => {
	const current = queue();
	const { main } = current;
	const {
		runs,
		figures: measured,
		summary,
	} = await measuredLoad(main, workflowId, () => current.processGroups);
	expect(runs).toHaveLength(DELIVERIES);
	expect(runs.filter((entry) => entry.status === 'success')).toHaveLength(DELIVERIES);
	expect(runs.every((entry) => entry.mode === 'webhook')).toBe(true);

	// One execution read back in full: the trigger's event, the invoice and its asset.
	const full = await getExecution(main, runs[0].id);
	const runData = full.data?.resultData.runData ?? {};
	const event = runData[NODE_NAMES.trigger][0].data?.main[0][0].json;
	const invoice = runData[NODE_NAMES.invoice][0].data?.main[0][0].json;
	const asset = runData[NODE_NAMES.asset][0].data?.main[0][0].json;
	expect(invoice).toMatchObject({
		invoiceNumber: (event?.data as { invoiceNumber: string }).invoiceNumber,
	});
	expect(asset).toMatchObject({
		assetId: (invoice?.lines as Array<{ assetId: string }>)[0].assetId,
	});
	expectNoSecret(
		full,
		new Map([...sim.secrets(), [deliveryKey(), 'delivery key']]),
		'the execution data',
	);

	const split = workerSplit(runs.map((entry) => entry.id));
	expect(split.unknown).toBe(0);
	expect(split.worker1).toBeGreaterThan(0);
	expect(split.worker2).toBeGreaterThan(0);
	expect(split.worker1 + split.worker2).toBe(DELIVERIES);

	rates.queue = measured;
	figure(`queue mode: ${summary}`);
	figure(`worker split: ${formatSplit(split)}`);
	if (rates.single) {
		figure(
			`queue mode vs single instance, same machine, same run: ${(measured.perSecond / rates.single.perSecond).toFixed(2)}× the deliveries per second (${measured.perSecond.toFixed(2)} vs ${rates.single.perSecond.toFixed(2)}), ${(measured.cpuMsPerDelivery / rates.single.cpuMsPerDelivery).toFixed(2)}× the CPU per delivery (${measured.cpuMsPerDelivery.toFixed(0)} vs ${rates.single.cpuMsPerDelivery.toFixed(0)} ms)`,
		);
	}
});

test('the repeated-event memory is per webhook process: a second process and a restart each let a repeat in', async () => {
	const current = queue();
	const [first] = current.webhooks;
	const before = await listExecutions(current.main, workflowId);
	const second = await current.addWebhookProcess();

	// The service delivers the event once, to the URL it holds (the first webhook process).
	const { event } = issueInvoiceBillingAnAsset();
	expectAllDelivered(await event.done, 1);
	await newExecutions(current.main, workflowId, before, 1);

	// Then the same event again, as a balancer or a service retry would bring it.
	const body = event.deliveries[0].event;
	const key = `?${DELIVERY_KEY_PARAMETER}=${deliveryKey()}`;
	const answers: Array<[string, number]> = [];
	answers.push(['webhook1 again', await post(first, key, body)]);
	answers.push(['webhook2', await post(second, key, body)]);
	answers.push(['webhook2 again', await post(second, key, body)]);
	await current.startTracked(first, true);
	answers.push(['webhook1 after its restart', await post(first, key, body)]);
	expect(answers.map(([, status]) => status)).toEqual([200, 200, 200, 200]);

	// The first delivery, the first copy at the second process, the copy after the restart; then
	// a genuine event, and no fourth run of the repeated one.
	await waitForExecutions(current.main, workflowId, before.length + 3, 10 * MINUTE);
	const since = await afterSentinel(current.main, before);
	const runs = since.get(event.eventId)?.length ?? 0;
	expect(runs).toBe(3);
	expect(since.size).toBe(2);
	expect([...since.values()].flat().every((execution) => execution.status === 'success')).toBe(
		true,
	);
	await current.removeWebhookProcess(second);
	figure(
		`repeats, two webhook processes and a restart: 1 event delivered ${answers.length + 1} times (service → webhook1, ${answers.map(([where]) => where).join(', ')}) → ${runs} executions: each process remembers only what it let in since it started`,
	);
});

/** Seconds between two polls: above the slowest poll here (a few pages of invoices). */
const POLL_SECONDS = 10;

/** The Polling Trigger (every 10 s, invoices issued or paid) → No Operation, on the main. */
async function publishPollingWorkflow() {
	const { main } = queue();
	const credential = await createCredential(main, sim, 'Invoicing & Assets account (polling)');
	const answer = await main.api<{ id: string }>(
		'POST',
		'/workflows',
		pollingWorkflow(credential, ['invoice.issued', 'invoice.paid'], pollEvery(POLL_SECONDS)),
	);
	expect(answer.status).toBe(200);
	expect((await main.api('POST', `/workflows/${answer.body.id}/publish`)).status).toBe(200);
	return answer.body.id;
}

/** `eventType:invoiceNumber` of every item the polling executions' trigger output. */
function polledChanges(executions: Execution[]): string[] {
	return executions.flatMap((execution) =>
		(execution.data?.resultData.runData[POLLING_NODE_NAME]?.[0]?.data?.main[0] ?? []).map(
			({ json }) =>
				`${String(json.eventType)}:${String((json.data as { invoiceNumber?: string }).invoiceNumber)}`,
		),
	);
}

test(`Polling Trigger in queue mode: only the main polls (every ${POLL_SECONDS} s), the workers run the executions, each change once`, async () => {
	const { main } = queue();
	const pollsBefore = pollRequests(sim).length;
	const pageRequests = () =>
		sim.log.entries({ route: 'invoices.list' }).filter((entry) => entry.query.updatedFrom).length;
	const pagesBefore = pageRequests();
	const listSeqBefore = Math.max(0, ...sim.log.entries().map((entry) => entry.seq));
	const pollingId = await publishPollingWorkflow();
	try {
		// Publishing runs a first poll on the main, the baseline, which starts nothing. It reads
		// every invoice of the last hour, several pages at full size: published means it is done,
		// so no change below can fall into it.
		expect((await settledPublication(main, pollingId)).status).toBe('published');
		expect(pollRequests(sim).length).toBeGreaterThan(pollsBefore);
		const baselinePages = pageRequests() - pagesBefore;

		const issued = [0, 1, 2, 3].map(() => issueInvoiceBillingAnAsset());
		for (const { event } of issued) expectAllDelivered(await event.done, 1);
		const paid = issued.slice(0, 2).map(({ invoice }) => sim.payInvoice(invoice.invoiceNumber));
		const expected = [
			...issued.map(({ invoice }) => `invoice.issued:${invoice.invoiceNumber}`),
			...paid.map(({ invoice }) => `invoice.paid:${invoice.invoiceNumber}`),
		].sort();

		await waitFor(
			'the changes in polling executions',
			async () => {
				const ended = (await listExecutions(main, pollingId)).filter(hasEnded);
				const full = await Promise.all(
					ended.map(async (entry) => await getExecution(main, entry.id)),
				);
				return polledChanges(full).length >= expected.length ? full : undefined;
			},
			2 * MINUTE,
			1000,
		);
		// One more poll after them must report nothing again: run it to its end (an invoice paid
		// after it is the sentinel whose execution shows that it has).
		const sentinel = issued[2].invoice.invoiceNumber;
		const reported = await afterOneMorePoll(main, {
			workflowId: pollingId,
			triggerNode: POLLING_NODE_NAME,
			polls: () => pollRequests(sim).length,
			change: () => `invoice.paid:${sim.payInvoice(sentinel).invoice.invoiceNumber}`,
		});
		expect(polledChanges(reported).sort()).toEqual(
			[...expected, `invoice.paid:${sentinel}`].sort(),
		);
		expect(reported.every((entry) => entry.status === 'success' && entry.mode === 'trigger')).toBe(
			true,
		);
		const split = workerSplit(reported.map((entry) => entry.id));
		expect(split.unknown).toBe(0);

		// Every poll came from the main, each alone. A poll may read several windows (200 earlier
		// invoices in its window at full size, records moving while it reads), one after the other;
		// a second poller (in any process) would poll at the same seconds, its first page coming
		// while the other poll's requests were being answered.
		const polls = groupPolls(
			sim.log
				.entries({ route: 'invoices.list' })
				.filter((entry) => entry.query.updatedFrom !== undefined && entry.seq > listSeqBefore),
			POLL_SECONDS,
		);
		expect(new Set(polls.flat().map((entry) => listSenders.get(entry.remotePort ?? 0)))).toEqual(
			new Set(['main']),
		);
		expect(polls.flatMap(overlappingWindows)).toEqual([]);
		const gaps = polls
			.slice(1)
			.map((poll, index) => (poll[0].receivedAtMs - polls[index][0].receivedAtMs) / 1000);
		expect(polls.length).toBeGreaterThanOrEqual(3);
		figure(
			`Polling Trigger (every ${POLL_SECONDS} s) in queue mode: ${expected.length} changes (${issued.length} issued, ${paid.length} paid) and a sentinel → ${reported.length} execution(s) carrying each change once (${formatSplit(split)}); ${polls.length} polls (${polls.flat().filter((entry) => entry.query.page === '1').length} windows; the baseline ${baselinePages} page${baselinePages === 1 ? '' : 's'}), all by the main, ${Math.min(...gaps).toFixed(0)}–${Math.max(...gaps).toFixed(0)} s apart; the poll after the changes reported nothing again`,
		);
	} finally {
		expect((await main.api('POST', `/workflows/${pollingId}/unpublish`)).status).toBe(200);
	}
});

test('unpublish → 0 subscriptions; the main alone ran create and delete', async () => {
	const { main } = queue();
	expect((await main.api('POST', `/workflows/${workflowId}/unpublish`)).status).toBe(200);
	// Unpublished, and nothing of the workflow left running in the background: no subscription.
	expect((await settledPublication(main, workflowId)).status).toBe('not_published');
	expect(subscriptionsOf(webhookId)).toHaveLength(0);
	// Every create and delete of the queue-mode run came from the main process: none from a
	// worker or the webhook process.
	expect({
		creates: sendersSince(clusterCallsFrom, 'subscriptions.create'),
		deletes: sendersSince(clusterCallsFrom, 'subscriptions.delete'),
	}).toEqual({ creates: ['main'], deletes: ['main'] });
	const creates = sim.log.count('subscriptions.create');
	const deletes = sim.log.count('subscriptions.delete');
	// One create and one delete for the queue-mode workflow, and for the single instance at full size.
	const runs = COMPARE_SINGLE ? 2 : 1;
	expect({ creates, deletes }).toEqual({ creates: runs, deletes: runs });
	expect(subscriptionCalls.map((call) => call.sender)).toEqual([
		...(COMPARE_SINGLE ? ['baseline', 'baseline'] : []),
		'main',
		'main',
	]);
	figure(
		`unpublish: 0 subscriptions (creates ${creates}, deletes ${deletes} over the whole run${COMPARE_SINGLE ? ', single instance included' : ''})`,
	);
});

/**
 * The exactly-once recipe under a burst. BURST invoices are issued at once, the service
 * delivering each event to the first webhook process; the first half is also copied to the second
 * webhook process at the same moment, the second half is repeated there once the burst has run.
 * docs/repeated-deliveries.md states the bound: each event's work runs once, none twice, none never.
 */
const BURST = 2 * Math.max(5, Math.round(DELIVERIES / 20));

test(`exactly once (docs/examples/new-invoice-exactly-once.json): a burst of ${BURST} events, copied to the second webhook process at the same moment or repeated there afterwards → each event's work ran once`, async () => {
	const current = queue();
	const { main } = current;
	const { postgres } = current;
	if (!postgres) throw new Error('no PostgreSQL');
	// The second webhook process starts while the table, the credentials and the workflow are made.
	const [second, recipe] = await Promise.all([
		current.addWebhookProcess(),
		(async () => {
			createEventsTable(postgres);
			const credentials = await createRecipeCredentials(main, sim, postgres);
			return await publishRecipe(main, sim, exactlyOnceRecipe(credentials));
		})(),
	]);
	try {
		await recipe.acceptedAt(current.webhooks[0], second);
		const before = await listExecutions(main, recipe.id);
		const copies: Array<Promise<number>> = [];
		const issued = Array.from({ length: BURST }, (_, index) => {
			const { invoice, event } = issueInvoiceBillingAnAsset();
			if (index < BURST / 2) copies.push(recipe.deliver(second, event.deliveries[0].event));
			return { invoice, event };
		});
		for (const { event } of issued) expectAllDelivered(await event.done, 1);
		expect(await Promise.all(copies)).toEqual(copies.map(() => 200));
		const repeated = issued.slice(BURST / 2);
		await waitForExecutions(main, recipe.id, before.length + BURST + copies.length, 10 * MINUTE);
		const repeats = await Promise.all(
			repeated.map(async ({ event }) => await recipe.deliver(second, event.deliveries[0].event)),
		);
		expect(repeats).toEqual(repeated.map(() => 200));
		// A genuine event after them: once it has run, the repeats have been handled.
		const sentinel = issueInvoiceBillingAnAsset();
		expectAllDelivered(await sentinel.event.done, 1);
		await waitForExecutions(main, recipe.id, before.length + 2 * BURST + 1, 10 * MINUTE);
		const since = await waitForEvent(
			main,
			recipe.id,
			RECIPE_NODES.trigger,
			sentinel.event.eventId,
			{
				after: before,
			},
		);

		const runs = [...since.values()].flat();
		expect(runs.filter((execution) => execution.status !== 'success')).toEqual([]);
		const passes = (eventId: string) => (since.get(eventId) ?? []).filter(didTheWork).length;
		const ids = issued.map(({ event }) => event.eventId);
		const twice = ids.filter((id) => passes(id) > 1);
		const never = ids.filter((id) => passes(id) === 0);
		expect({ twice, never }).toEqual({ twice: [], never: [] });
		expect(runs).toHaveLength(2 * BURST + 1);
		// Every execution that did not do the work stopped at Only New Events, after the insert.
		const path = (execution: Execution) =>
			[RECIPE_NODES.trigger, RECIPE_NODES.record, RECIPE_NODES.onlyNew, RECIPE_NODES.work].map(
				(node) => itemsOut(execution, node),
			);
		expect(runs.filter((execution) => !didTheWork(execution)).map(path)).toEqual(
			Array.from({ length: BURST }, () => [1, 1, 0, undefined]),
		);
		// At the service: each event's invoice was fetched once.
		const fetchCounts = issued.map(
			({ invoice }) =>
				sim.log
					.entries({ route: 'invoices.get' })
					.filter((entry) => entry.params.invoiceNumber === invoice.invoiceNumber).length,
		);
		expect(fetchCounts).toEqual(issued.map(() => 1));
		figure(
			`exactly-once recipe (event ID inserted into a PostgreSQL primary key): ${BURST} events issued at once, ${copies.length} of them copied to webhook2 at the same moment and ${repeated.length} repeated there afterwards → ${2 * BURST} executions, ${ids.length - twice.length - never.length} of ${BURST} events did the work once, ${twice.length} twice, ${never.length} never; each invoice fetched once`,
		);
	} finally {
		await current.removeWebhookProcess(second);
		await recipe.unpublish();
	}
});

test('stopping the cluster leaves no process and no data folder behind', async () => {
	const current = queue();
	await current.dispose();
	cluster = undefined;
	expect(current.leftovers()).toEqual({ pids: [], folders: [] });
	figure(
		'teardown: 0 processes and 0 folders left (n8n ×4 with their task runners, PostgreSQL, Redis)',
	);
});
