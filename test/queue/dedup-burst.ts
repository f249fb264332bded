/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/**
 * `npm run measure:dedup`: when "each event once" holds in queue mode and when it does not (issue
 * 23). Figures only, never run in CI; the queue suite asserts the recipe's own figure.
 *
 * One cluster (Redis, PostgreSQL, a main, workers, three webhook processes). Each run publishes a
 * fresh workflow (a fresh history), then:
 *   1. a burst: BURST invoices issued at once; the service delivers each event to webhook1 and,
 *      at the same moment, a copy goes to webhook2 (2 × BURST deliveries in flight);
 *   2. once all have run, every event is repeated at webhook3, whose trigger has not seen it.
 * An event "passed" in an execution when the workflow's last node (Get Invoice) ran for it. Each
 * event should pass once. For Remove Duplicates the history row in n8n's database is also read
 * after step 1: the event IDs missing from it are the repeats step 2 lets through.
 *
 * Workers: 2 × 10 jobs at once (n8n's default), then 1 × 10, then 1 × 1. Plus a sequential check of
 * Remove Duplicates' history size. Sizes: DEDUP_BURST (20), DEDUP_BIG_BURST (100, the recipe only).
 */
import '../harness/setup-env';

import { createHash, randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

import { byEventId, listExecutions, waitForExecutions, type Execution } from '../n8n/executions';
import { N8nInstance } from '../n8n/instance';
import { disposePackedPackage } from '../n8n/package';
import { handleSignals, onShutdown, runCleanups } from '../n8n/shutdown';
import { startSimulator, type Simulator } from '../simulator';
import { QueueCluster } from './cluster';
import {
	createEventsTable,
	createRecipeCredentials,
	didTheWork,
	exactlyOnceRecipe,
	itemsOut,
	publishRecipe,
	RECIPE_NODES,
	removeDuplicatesRecipe,
} from './recipes';
import type { WorkflowFile } from '../n8n/examples';

function size(name: string, fallback: number): number {
	const value = Number(process.env[name]);
	return Number.isInteger(value) && value > 0 ? value : fallback;
}

const BURST = size('DEDUP_BURST', 20);
const BIG_BURST = size('DEDUP_BIG_BURST', 100);
const MINUTE = 60_000;

function say(line: string) {
	process.stderr.write(`[dedup] ${line}\n`);
}

const rows: string[] = [];
function row(line: string) {
	rows.push(line);
	process.stdout.write(`[dedup figures] ${line}\n`);
}

let sim: Simulator;
let cluster: QueueCluster;
/** The workers running now, as "count × jobs at once". */
let workers = '2 × 10';

/** A new invoice; the service delivers its invoice.issued event to the published workflow. */
function issueInvoice() {
	return sim.issueInvoice();
}

function md5(value: string) {
	return createHash('md5').update(value).digest('base64');
}

/** The event IDs among `ids` that Remove Duplicates' history row of `workflowId` holds. */
function inHistory(workflowId: string, ids: string[]): number {
	const text = cluster.postgres
		?.sql(`SELECT value FROM processed_data WHERE "workflowId" = '${workflowId}'`, 'n8n')
		.trim();
	const hashes = new Set(text ? (JSON.parse(text) as { data: string[] }).data : []);
	return ids.filter((id) => hashes.has(md5(id))).length;
}

/** One line with the distinct error messages of the failed executions, if any. */
function reportFailures(failed: Execution[]) {
	if (failed.length === 0) return;
	const messages = new Set(
		failed.map((execution) => execution.data?.resultData.error?.message ?? execution.status),
	);
	row(`  failures: ${[...messages].join(' | ')}`);
}

async function burstRun(label: string, workflow: WorkflowFile, burst: number) {
	const { main, webhooks } = cluster;
	const recipe = await publishRecipe(main, sim, workflow);
	const isRemoveDuplicates = workflow.nodes.some(
		(node) => node.name === RECIPE_NODES.removeDuplicates,
	);
	try {
		const publishedAt = Date.now();
		await recipe.acceptedAt(...webhooks);
		say(
			`${label}: the key was accepted at every webhook process ${Date.now() - publishedAt} ms after the subscription existed`,
		);
		const started = Date.now();
		const load = loadavg()[0];
		const copies: Array<Promise<number>> = [];
		const events = Array.from({ length: burst }, () => {
			const { event } = issueInvoice();
			copies.push(recipe.deliver(webhooks[1], event.deliveries[0].event));
			return event;
		});
		const answers = [
			...(await Promise.all(events.map(async (event) => (await event.done)[0]?.lastStatus))),
			...(await Promise.all(copies)),
		];
		if (answers.some((status) => status !== 200)) throw new Error(`answers: ${answers.join()}`);
		const afterBurst = new Set(
			(await waitForExecutions(main, recipe.id, 2 * burst, 10 * MINUTE)).map((entry) => entry.id),
		);
		const ids = events.map((event) => event.eventId);
		const kept = isRemoveDuplicates ? inHistory(recipe.id, ids) : undefined;

		const repeats = await Promise.all(
			events.map(async (event) => await recipe.deliver(webhooks[2], event.deliveries[0].event)),
		);
		if (repeats.some((status) => status !== 200)) throw new Error(`repeats: ${repeats.join()}`);
		await waitForExecutions(main, recipe.id, 3 * burst, 10 * MINUTE);
		const seconds = (Date.now() - started) / 1000;

		const executions = await listExecutions(main, recipe.id, true);
		const byEvent = byEventId(executions, RECIPE_NODES.trigger);
		const failed = executions.filter((execution) => execution.status !== 'success');
		let twiceInBurst = 0;
		let repeatPassed = 0;
		let never = 0;
		let exactlyOnce = 0;
		for (const id of ids) {
			const runs = byEvent.get(id) ?? [];
			const burstPasses = runs.filter((run) => afterBurst.has(run.id) && didTheWork(run)).length;
			const repeatPasses = runs.filter((run) => !afterBurst.has(run.id) && didTheWork(run)).length;
			if (burstPasses > 1) twiceInBurst++;
			if (repeatPasses > 0) repeatPassed++;
			if (burstPasses + repeatPasses === 0) never++;
			if (burstPasses + repeatPasses === 1) exactlyOnce++;
		}
		row(
			`${label}: burst ${burst} (×2 copies at once), workers ${workers}: ${exactlyOnce}/${burst} passed exactly once; ` +
				`${twiceInBurst} passed twice in the burst; ${repeatPassed} repeats passed afterwards` +
				(kept === undefined ? '' : ` (history kept ${kept}/${burst} IDs after the burst)`) +
				`; ${never} never; ${failed.length} failed executions; ${seconds.toFixed(0)} s, load ${load.toFixed(1)}`,
		);
		reportFailures(failed);
	} finally {
		await recipe.unpublish();
	}
}

/** Remove Duplicates with a small history: events one at a time, each waited for. */
async function historyRun(historySize: number, events: number, credentials: Credentials) {
	const { main } = cluster;
	const recipe = await publishRecipe(
		main,
		sim,
		removeDuplicatesRecipe(credentials, { historySize }),
	);
	try {
		for (let index = 1; index <= events; index++) {
			const { event } = issueInvoice();
			await event.done;
			await waitForExecutions(main, recipe.id, index, 5 * MINUTE);
		}
		const executions = (await listExecutions(main, recipe.id, true)).sort(
			(a, b) => Number(a.id) - Number(b.id),
		);
		const outcome = executions.map((execution) =>
			execution.status === 'success' ? (didTheWork(execution) ? 'passed' : 'stopped') : 'failed',
		);
		const firstFailure = outcome.indexOf('failed');
		row(
			`Remove Duplicates, history size ${historySize}: ${events} new events one at a time → ${outcome.join(', ')}` +
				(firstFailure >= 0
					? ` (from event ${firstFailure + 1}: "${executions[firstFailure].data?.resultData.error?.message}")`
					: ''),
		);
	} finally {
		await recipe.unpublish();
	}
}

/**
 * The upstream repro, n8n's own nodes only: one n8n in regular mode (SQLite, n8n's default
 * concurrency), Webhook → Remove Duplicates on `{{ $json.body.id }}` → No Operation. BURST distinct
 * IDs posted at once, then each again, one at a time.
 */
async function regularModeRun() {
	const n8n = new N8nInstance({ name: 'dedup-regular' });
	onShutdown(async () => await n8n.dispose());
	await n8n.start();
	try {
		const path = `dedup-${randomUUID()}`;
		const workflow = {
			name: 'Remove Duplicates under a burst',
			settings: { executionOrder: 'v1' },
			nodes: [
				{
					id: randomUUID(),
					name: 'Webhook',
					type: 'n8n-nodes-base.webhook',
					typeVersion: 2,
					position: [0, 0],
					webhookId: randomUUID(),
					parameters: { httpMethod: 'POST', path, responseMode: 'onReceived', options: {} },
				},
				{
					id: randomUUID(),
					name: 'Remove Duplicates',
					type: 'n8n-nodes-base.removeDuplicates',
					typeVersion: 2,
					position: [240, 0],
					parameters: {
						operation: 'removeItemsSeenInPreviousExecutions',
						dedupeValue: '={{ $json.body.id }}',
						options: {},
					},
				},
				{
					id: randomUUID(),
					name: 'New ID',
					type: 'n8n-nodes-base.noOp',
					typeVersion: 1,
					position: [480, 0],
					parameters: {},
				},
			],
			connections: {
				Webhook: { main: [[{ node: 'Remove Duplicates', type: 'main', index: 0 }]] },
				'Remove Duplicates': { main: [[{ node: 'New ID', type: 'main', index: 0 }]] },
			},
		};
		const created = await n8n.api<{ id: string }>('POST', '/workflows', workflow);
		if (created.status !== 200) throw new Error(`workflow: ${created.status} ${created.text}`);
		const published = await n8n.api('POST', `/workflows/${created.body.id}/publish`);
		if (published.status !== 200) throw new Error(`publish: ${published.status}`);
		await sleep(2000);
		const post = async (id: string) =>
			(
				await n8n.http('POST', `/webhook/${path}`, {
					rawBody: JSON.stringify({ id }),
					headers: { 'content-type': 'application/json' },
				})
			).status;
		const ids = Array.from({ length: BURST }, () => randomUUID());
		const load = loadavg()[0];
		const burst = await Promise.all(ids.map(post));
		await waitForExecutions(n8n, created.body.id, BURST, 5 * MINUTE);
		const again: number[] = [];
		for (const id of ids) {
			again.push(await post(id));
			await waitForExecutions(n8n, created.body.id, BURST + again.length, 5 * MINUTE);
		}
		if ([...burst, ...again].some((status) => status !== 200)) throw new Error('not all 200');
		const executions = (await listExecutions(n8n, created.body.id, true)).sort(
			(a, b) => Number(a.id) - Number(b.id),
		);
		const passed = (execution: Execution) => itemsOut(execution, 'New ID') === 1;
		const failed = executions.filter((execution) => execution.status !== 'success');
		row(
			`regular mode (one n8n, SQLite), Webhook → Remove Duplicates → No Operation: ${BURST} new IDs posted at once → ` +
				`${executions.slice(0, BURST).filter(passed).length} passed; then each again, one at a time → ` +
				`${executions.slice(BURST).filter(passed).length} passed a second time; ${failed.length} failed executions; load ${load.toFixed(1)}`,
		);
		reportFailures(failed);
	} finally {
		await n8n.dispose();
	}
}

type Credentials = Awaited<ReturnType<typeof createRecipeCredentials>>;

async function main() {
	handleSignals();
	const started = Date.now();
	sim = await startSimulator({
		invoices: 40,
		assets: 30,
		delivery: { retrySchedule: [500, 1000, 2000, 4000], timeoutMs: 30_000 },
	});
	onShutdown(async () => await sim.close());
	cluster = await QueueCluster.start({ workers: 2 });
	onShutdown(async () => await cluster.dispose());
	await cluster.addWebhookProcess();
	await cluster.addWebhookProcess();
	if (!cluster.postgres) throw new Error('no PostgreSQL');
	createEventsTable(cluster.postgres);
	const credentials = await createRecipeCredentials(cluster.main, sim, cluster.postgres);
	say(`cluster up in ${((Date.now() - started) / 1000).toFixed(0)} s`);
	row(
		`machine: ${cpus().length} cores; load average at start ${loadavg()
			.map((value) => value.toFixed(1))
			.join(' ')}`,
	);

	const recipe = () => exactlyOnceRecipe(credentials);
	const removeDuplicates = (options: Parameters<typeof removeDuplicatesRecipe>[1] = {}) =>
		removeDuplicatesRecipe(credentials, options);

	say('2 workers × 10');
	await burstRun('Remove Duplicates (scope node)', removeDuplicates(), BURST);
	await burstRun(
		'Remove Duplicates (scope workflow)',
		removeDuplicates({ scope: 'workflow' }),
		BURST,
	);
	for (const burst of [2, 5]) {
		for (let trial = 1; trial <= 3; trial++) {
			await burstRun(`Remove Duplicates (scope node), trial ${trial}`, removeDuplicates(), burst);
		}
	}
	await burstRun('Remove Duplicates (scope node)', removeDuplicates(), 10);
	await burstRun('PostgreSQL recipe', recipe(), BURST);
	await burstRun('PostgreSQL recipe', recipe(), BIG_BURST);

	workers = '1 × 10';
	say('1 worker × 10');
	const [first, second] = cluster.workers as [N8nInstance, N8nInstance];
	await cluster.removeWorker(second);
	await burstRun('Remove Duplicates (scope node)', removeDuplicates(), BURST);

	workers = '1 × 1';
	say('1 worker × 1');
	await cluster.addWorker(1);
	await cluster.removeWorker(first);
	await burstRun('Remove Duplicates (scope node)', removeDuplicates(), BURST);
	await burstRun('PostgreSQL recipe', recipe(), BURST);
	await historyRun(5, 7, credentials);
	await cluster.dispose();
	await regularModeRun();

	row(
		`total ${((Date.now() - started) / 60_000).toFixed(1)} min; load average at end ${loadavg()
			.map((value) => value.toFixed(1))
			.join(' ')}`,
	);
	process.stdout.write(
		`\n=== exactly once under a burst ===\n${rows.map((line) => `  ${line}`).join('\n')}\n`,
	);
}

main()
	.catch((error: Error) => {
		process.stderr.write(`${error.stack ?? error.message}\n`);
		process.exitCode = 1;
	})
	.finally(async () => {
		await runCleanups();
		disposePackedPackage();
	});
