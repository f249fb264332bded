/* eslint-disable @n8n/community-nodes/no-restricted-imports */
/**
 * The polling soak (issues 15 and 20): published Polling Triggers in real n8n 2.41.1 instances
 * poll simulators while records change there, about 10 % of the poll requests fail (half with a
 * 400 that fails the poll, half with a 500 that is retried), and n8n is restarted, with changes
 * made while it is down. Each simulator stands for one condition a real service creates:
 *
 * - its clock 3 minutes ahead of n8n's, or 3 minutes behind;
 * - changes within one second (an invoice issued and paid in one second; an asset updated twice)
 *   and edits after a final state (a paid invoice corrected: nothing; a retired asset: an update);
 * - invoices listed long after their issueDate (a sync lag);
 * - lists without totalItems, in updatedAt order (a changed record moves to the end), with bursts
 *   of 250 invoices issued in one second (the page loop that stopped after page 1 lost 150);
 * - stamps the trigger cannot trust (years ahead; no time at all);
 * - writers whose clocks differ: asset updates stamped 20 minutes ahead (beyond the listing
 *   bound), payments stamped 30 s before the invoice's issue (its state before);
 * - backlogs larger than one poll's budget: bursts of invoices (10 a second by the service's
 *   clock) read by an n8n on its durable scheduler with durable cursors and a 10 s poll timeout (a
 *   budget of 5 s); at full size 2,000 at 1,000 ms per list request, more than a poll can read in
 *   its budget, so a window is read page by page over several polls; at CI size one burst of 1,200
 *   at 500 ms (test/e2e/polling-backlog.test.ts drains a burst beyond the budget in CI).
 *
 * Every workflow must report every change made after its baseline once: lost, twice and
 * unexpected are counted per condition, all 0. After the last change every service's clock
 * (but the backlog's) moves 25 minutes on, so that every change is settled (read again once it
 * can no longer be listed late) and every stamp ahead is reached before the count. The workflows poll every 10 s (15 s at full size,
 * where a poll reads more pages, and always on the durable scheduler, where a poll may take its
 * budget; test/n8n/polling.ts); at full size one more workflow per condition polls Every Minute, as
 * users set it. Each poll is judged against its budget (pollBudgetMs). Each workflow has its own
 * API key, so that its polls can be counted at the simulator.
 *
 * Polling sees records as they are: of two updates of one asset between two polls it reports the
 * last. So each asset changes in one moment at most (twice within one second in the "same
 * second" condition, where the last state is the change expected; a retired asset is edited
 * once every workflow has polled it several times), and invoices change by status.
 */
import { setTimeout as sleep } from 'node:timers/promises';

import {
	getExecution,
	listExecutions,
	nodeOutput,
	waitFor,
	type Execution,
} from '../n8n/executions';
import { N8nInstance } from '../n8n/instance';
import {
	DURABLE_POLL_BUDGET_MS,
	DURABLE_SCHEDULER,
	EVERY_MINUTE,
	groupPolls,
	LEGACY_POLL_BUDGET_MS,
	pollEvery,
	waitForPolledEvent,
	type PollTimes,
} from '../n8n/polling';
import { settledPublication } from '../n8n/publication';
import { onShutdown } from '../n8n/shutdown';
import type { ClientRecord, RequestLogEntry, Simulator, SimulatorOptions } from '../simulator';
import { CREDENTIAL_TYPE, POLLING_NODE_NAME, pollingWorkflow } from '../e2e/workflows';
import { MAX_POLL_MS } from '../../nodes/InvoicingAssets/trigger/polling/poll';
import { DEADLINE_GRACE_MS } from '../../nodes/InvoicingAssets/transport/retry';
import { startTrackedSimulator, type RunContext } from './support';

const ITEM = '8 polling';
const MINUTE = 60_000;

export interface PollingSizes {
	/** Workflows per condition that poll every `pollSeconds`. */
	workflowsPerService: number;
	pollSeconds: number;
	/** One more workflow per condition on Every Minute. */
	everyMinute: boolean;
	/** Changes per condition (bursts of the backlog condition come on top). */
	changesPerService: number;
	/** Bursts of the backlog condition, spread over the run, and the invoices of one. */
	bursts: number;
	burst: number;
	/** How long the backlog condition's service takes to answer a list request. */
	backlogLatencyMs: number;
	/** Seconds over which the changes are spread. */
	seconds: number;
	restarts: number;
}

export const FULL_POLLING: PollingSizes = {
	workflowsPerService: 2,
	pollSeconds: 15,
	everyMinute: true,
	changesPerService: 1200,
	bursts: 3,
	burst: 2000,
	backlogLatencyMs: 1000,
	seconds: 11 * 60,
	restarts: 2,
};

/** Each check of the soak still fails at this size on its mutation (CONTRIBUTING.md). */
export const CI_POLLING: PollingSizes = {
	workflowsPerService: 1,
	pollSeconds: 10,
	everyMinute: false,
	changesPerService: 150,
	bursts: 1,
	burst: 1200,
	backlogLatencyMs: 500,
	seconds: 90,
	restarts: 1,
};

/** On the durable scheduler a poll may take its whole budget (5 s): polls come 15 s apart there. */
const DURABLE_POLL_SECONDS = 15;
const ABANDONED = 'Poll exceeded its timeout and was abandoned';
/** The requests of one poll come an answer and a retry's wait apart at most (0.75 s in a CI run). */
const POLL_GAP_MS = 4000;
/** A burst at the service without totals: more than two pages in one second. */
const NO_TOTAL_BURST = 250;
/** After the changes: every change settled, every stamp ahead (20 minutes) reached. */
const SETTLE_ALL_MS = 25 * MINUTE;
/**
 * A record changes again (a retired asset edited, an overdue invoice paid) once every workflow has
 * begun this many polls since: one succeeded.
 */
const POLLS_BEFORE_CHANGING_AGAIN = 5;

interface Service {
	condition: string;
	sim: Simulator;
	/** The n8n its workflows are published on, and the one on the durable scheduler. */
	n8n: N8nInstance;
	durable: N8nInstance;
	clients: ClientRecord[];
	/** Poll Times of each client's workflow, and their period (seconds). */
	pollTimes: PollTimes[];
	periods: number[];
	/** When both n8n had stopped, to start again (ms since the epoch; one list for all services). */
	restarts: number[];
	workflowIds: string[];
	workflowNames: string[];
	/** The changes made after every workflow's baseline, as the eventIds name them. */
	expected: Set<string>;
	/** Invoices issued here and not yet paid, cancelled or overdue; paid ones; assets not changed yet. */
	open: string[];
	paid: string[];
	/** Invoices marked overdue and not paid yet, with the real time of it, oldest first. */
	overdue: Array<{ invoiceNumber: string; at: number }>;
	untouchedAssets: string[];
	/** Assets retired by the same-second condition, with the real time of it, oldest first. */
	retired: Array<{ assetId: string; at: number }>;
	/** The service's time when the changes began (every baseline is older). */
	startedAt: number;
	changes: number;
	/** One change at this service (a few, for the conditions made of several). */
	change: (service: Service, step: number) => void;
}

interface Condition {
	name: string;
	options?: SimulatorOptions;
	durable?: boolean;
	setUp?: (sim: Simulator, sizes: PollingSizes) => void;
	change: (service: Service, step: number) => void;
}

const CONDITIONS: Condition[] = [
	{ name: 'clock 3 min ahead', options: { clockOffsetMs: 3 * MINUTE }, change: mixedChange },
	{ name: 'clock 3 min behind', options: { clockOffsetMs: -3 * MINUTE }, change: mixedChange },
	{ name: 'changes within a second, edits after a final state', change: sameSecondChange },
	{ name: 'listed after its issueDate', change: syncLagChange },
	{
		name: 'no totalItems, updatedAt order',
		setUp: (sim) => sim.setListShape({ order: 'updatedAt', totalItems: 'null' }),
		change: noTotalChange,
	},
	{ name: 'stamps it cannot trust', change: untrustedStampChange },
	{ name: 'writers’ clocks ahead and behind', change: writerClockChange },
	{
		name: 'backlog bursts (durable scheduler and cursors)',
		durable: true,
		setUp: (sim, sizes) =>
			sim.faults.add({ route: 'invoices.list', latencyMs: sizes.backlogLatencyMs }),
		change: () => undefined,
	},
];

export async function pollingSoakCheck(ctx: RunContext) {
	const sizes = ctx.ci ? CI_POLLING : FULL_POLLING;
	const legacy = new N8nInstance({ name: 'reliability-polling' });
	const durable = new N8nInstance({ name: 'reliability-polling-durable', env: DURABLE_SCHEDULER });
	const instances = [legacy, durable];
	const forget = onShutdown(async () => {
		for (const n8n of instances) await n8n.dispose();
	});
	const services: Service[] = [];
	try {
		const restarts: number[] = [];
		for (const condition of CONDITIONS) {
			const sim = await startTrackedSimulator({
				invoices: 50,
				assets: sizes.changesPerService,
				...condition.options,
			});
			const period = condition.durable ? DURABLE_POLL_SECONDS : sizes.pollSeconds;
			const pollTimes = [
				...Array.from({ length: sizes.workflowsPerService }, () => pollEvery(period)),
				...(sizes.everyMinute ? [EVERY_MINUTE] : []),
			];
			services.push({
				condition: condition.name,
				sim,
				n8n: condition.durable ? durable : legacy,
				durable,
				clients: pollTimes.map((_, index) =>
					sim.registerClient({ environment: 'production', displayName: `poller ${index + 1}` }),
				),
				pollTimes,
				periods: pollTimes.map((times) => (times === EVERY_MINUTE ? 60 : period)),
				restarts,
				workflowIds: [],
				workflowNames: [],
				expected: new Set(),
				open: [],
				paid: [],
				overdue: [],
				untouchedAssets: sim.data
					.assets()
					.filter((asset) => asset.status !== 'retired')
					.map((asset) => asset.assetId),
				retired: [],
				startedAt: 0,
				changes: 0,
				change: condition.change,
			});
		}
		const workflows = services.reduce((sum, service) => sum + service.clients.length, 0);
		ctx.say(
			`polling: starting 2 n8n, ${workflows} workflows over ${services.length} conditions (every ${sizes.pollSeconds} s, ${DURABLE_POLL_SECONDS} s on the durable scheduler${sizes.everyMinute ? ', and Every Minute' : ''})`,
		);
		await Promise.all(instances.map(async (n8n) => await n8n.start()));
		for (const service of services) await publishWorkflows(service);
		// Every workflow's baseline: its first poll, part of its registration, has read both lists.
		// On the durable scheduler the first scheduled poll takes it again
		// (docs/choosing-a-trigger.md): one more poll after that one.
		for (const service of services) {
			for (const [index, workflowId] of service.workflowIds.entries()) {
				const settled = await settledPublication(service.n8n, workflowId);
				if (settled.status !== 'published') {
					throw new Error(`workflow ${workflowId}: ${JSON.stringify(settled)}`);
				}
				if (service.n8n !== durable) continue;
				await waitFor(
					`${service.condition}: baseline of ${workflowId}`,
					() => pollsOf(service, index).length >= 3,
					3 * service.periods[index] * 1000 + MINUTE,
					500,
				);
			}
		}
		await sleep(2000);
		for (const [index, service] of services.entries()) {
			service.startedAt = service.sim.clock.now().getTime();
			CONDITIONS[index].setUp?.(service.sim, sizes);
			// 5 % of the poll requests fail the poll (400, not retried), 5 % are retried (500); the
			// first asset list request of each kind fails for sure, so that even a short run sees both.
			service.sim.faults.add({ route: 'assets.list', status: 400, times: 1 });
			service.sim.faults.add({ route: 'invoices.list', status: 500, times: 1 });
			for (const route of ['invoices.list', 'assets.list'] as const) {
				service.sim.faults.add({ route, status: 400, probability: 0.05 });
				service.sim.faults.add({ route, status: 500, probability: 0.05 / 0.95 });
			}
		}

		const backlog = services.find((service) => service.n8n === durable) as Service;
		const startedChanges = Date.now();
		const totalMs = sizes.seconds * 1000;
		const restartAt = Array.from(
			{ length: sizes.restarts },
			(_, index) => ((index + 1) * totalMs) / (sizes.restarts + 1),
		);
		const burstAt = Array.from(
			{ length: sizes.bursts },
			(_, index) => (index * totalMs) / sizes.bursts,
		);
		let restarted = 0;
		let burstsDone = 0;
		for (let step = 0; step < sizes.changesPerService; step++) {
			for (const service of services) service.change(service, step);
			const elapsed = Date.now() - startedChanges;
			if (burstsDone < burstAt.length && elapsed >= burstAt[burstsDone]) {
				burstsDone += 1;
				burst(backlog, sizes.burst);
				ctx.say(`polling: burst ${burstsDone} of ${sizes.burst} changes (backlog condition)`);
			}
			if (restarted < restartAt.length && elapsed >= restartAt[restarted]) {
				restarted += 1;
				ctx.say(`polling: restart ${restarted} of both n8n; changes go on while they are down`);
				await Promise.all(instances.map(async (n8n) => await n8n.stop()));
				restarts.push(Date.now());
				for (let extra = 0; extra < 20; extra++) {
					for (const service of services) service.change(service, step);
				}
				burst(backlog, 50);
				await Promise.all(instances.map(async (n8n) => await n8n.start()));
			}
			const wait = startedChanges + ((step + 1) * totalMs) / sizes.changesPerService - Date.now();
			if (wait > 0) await sleep(wait);
		}
		ctx.say(
			`polling: ${services.reduce((sum, service) => sum + service.changes, 0)} changes; waiting for the last polls`,
		);
		for (const service of services) {
			service.sim.faults.clear();
			if (service === backlog) {
				service.sim.faults.add({ route: 'invoices.list', latencyMs: sizes.backlogLatencyMs });
			} else {
				service.sim.clock.advance(SETTLE_ALL_MS);
			}
		}

		// One more poll of every workflow after the changes, then a sentinel invoice at each
		// service: once every workflow has an ended execution reporting it, and none running,
		// every poll before it has ended and shown what it emitted, the poll after the changes
		// (which read them all again) included. The backlog may still be draining: its polls can
		// follow each other without a gap, so there the sentinel alone is waited for (its window
		// is read after every older one).
		const pollsNow = services.map((service) =>
			service.clients.map((_, c) => pollsOf(service, c).length),
		);
		// Waits end as soon as their state is reached.
		const lastWaitMs = (sizes.everyMinute ? 3 : 2) * MINUTE;
		const drainWaitMs = 5 * MINUTE;
		const notPolledAgain = () =>
			services.flatMap((service, s) =>
				service === backlog
					? []
					: service.clients
							.map((_, c) => c)
							.filter((c) => pollsOf(service, c).length <= pollsNow[s][c])
							.map((c) => ({ service, c })),
			);
		await waitFor(
			'one more poll of every workflow',
			() => notPolledAgain().length === 0,
			lastWaitMs,
			500,
		).catch(async (error: Error) => {
			const why = [];
			for (const { service, c } of notPolledAgain()) why.push(await whyNoPoll(service, c));
			throw new Error(`${error.message} (still waiting: ${why.join('; ')})`);
		});
		const executionsOf = new Map<string, Execution[]>();
		for (const service of services) {
			const sentinel = service.sim.issueInvoice().invoice.invoiceNumber;
			service.expected.add(`invoice.issued:${sentinel}`);
			for (const workflowId of service.workflowIds) {
				// A sentinel that never comes is a lost change like any other: counted below.
				const executions = await waitForPolledEvent(
					service.n8n,
					workflowId,
					POLLING_NODE_NAME,
					`invoice.issued:${sentinel}`,
					service === backlog ? drainWaitMs : lastWaitMs,
				).catch(async () => await executionsWithData(service.n8n, workflowId));
				executionsOf.set(workflowId, executions);
			}
		}
		const idleRequests = ctx.ci ? undefined : await idlePollCost(services[0]);
		reportFigures(ctx, sizes, services, executionsOf, idleRequests, { legacy, durable });
	} finally {
		forget();
		for (const n8n of instances) await n8n.dispose();
		for (const service of services) await service.sim.close();
	}
}

async function publishWorkflows(service: Service) {
	const { n8n, sim } = service;
	for (const [index, client] of service.clients.entries()) {
		const credential = await n8n.api<{ id: string; name: string }>('POST', '/credentials', {
			name: `${service.condition} ${client.displayName}`,
			type: CREDENTIAL_TYPE,
			data: {
				environment: 'production',
				baseUrl: sim.serviceUrl,
				identityUrl: sim.identityUrl,
				scope: client.scope,
				clientId: client.clientId,
				clientSecret: client.clientSecret,
			},
		});
		if (credential.status !== 200) throw new Error(`credential: ${credential.status}`);
		const workflow = await n8n.api<{ id: string; name: string }>(
			'POST',
			'/workflows',
			pollingWorkflow(
				{ id: credential.body.id, name: credential.body.name },
				['*'],
				service.pollTimes[index],
			),
		);
		if (workflow.status !== 200) throw new Error(`workflow: ${workflow.status}`);
		const published = await n8n.api('POST', `/workflows/${workflow.body.id}/publish`);
		if (published.status !== 200) throw new Error(`publish: ${published.status}`);
		service.workflowIds.push(workflow.body.id);
		service.workflowNames.push(workflow.body.name);
	}
}

function reportFigures(
	ctx: RunContext,
	sizes: PollingSizes,
	services: Service[],
	executionsOf: Map<string, Execution[]>,
	idleRequests: number | undefined,
	n8n: { legacy: N8nInstance; durable: N8nInstance },
) {
	let changes = 0;
	let expectedItems = 0;
	let reportedItems = 0;
	let failedPolls = 0;
	let totalPolls = 0;
	let retried = 0;
	let minPolls = 0;
	for (const service of services) {
		let lost = 0;
		let twice = 0;
		let unexpected = 0;
		for (const [index, workflowId] of service.workflowIds.entries()) {
			const ids: string[] = [];
			for (const full of executionsOf.get(workflowId) ?? []) {
				ids.push(
					...nodeOutput(full, POLLING_NODE_NAME).map((item) => changeOf(String(item.json.eventId))),
				);
			}
			reportedItems += ids.length;
			const seen = new Set(ids);
			twice += ids.length - seen.size;
			const lostIds = [...service.expected].filter((id) => !seen.has(id));
			const twiceIds = ids.filter((id, at) => ids.indexOf(id) !== at);
			lost += lostIds.length;
			for (const id of seen) if (!service.expected.has(id)) unexpected += 1;
			if (lostIds.length > 0 || twiceIds.length > 0) {
				// What went wrong, so that a red soak says where to look.
				ctx.say(
					`polling: ${service.condition}, workflow ${index + 1} (${service.periods[index]} s): lost ${lostIds.length} (${lostIds.slice(0, 6).join(', ')}), twice ${twiceIds.length} (${twiceIds.slice(0, 6).join(', ')})`,
				);
			}
			totalPolls += pollsOf(service, index).length;
			// At least half the polls the Poll Times schedule while the changes are made.
			if (service.pollTimes[index] !== EVERY_MINUTE) {
				minPolls += Math.floor(sizes.seconds / service.periods[index] / 2);
			}
		}
		// Faults answer before authentication, so they are counted per service, not per API key.
		for (const route of ['invoices.list', 'assets.list'] as const) {
			failedPolls += service.sim.log.count(route, { status: 400 });
			retried += service.sim.log.count(route, { status: 500 });
		}
		changes += service.changes;
		expectedItems += service.expected.size * service.workflowIds.length;
		ctx.report.check(
			ITEM,
			`${service.condition}: changes / lost / twice / for no change made`,
			`${service.changes} / ${lost} / ${twice} / ${unexpected}`,
			'— / 0 / 0 / 0',
			service.changes > 0 && lost === 0 && twice === 0 && unexpected === 0,
		);
	}
	const abandoned = n8n.durable.log().split(ABANDONED).length - 1;
	const minChanges = ctx.ci ? 300 : 5000;
	ctx.report.check(
		ITEM,
		`changes made at the services / polls by the workflows (${services.length} conditions)`,
		`${changes} / ${totalPolls}`,
		`≥ ${minChanges.toLocaleString('en')} / ≥ ${minPolls}`,
		changes >= minChanges && totalPolls >= minPolls,
	);
	for (const [scheduler, instance] of [
		['legacy', n8n.legacy],
		['durable', n8n.durable],
	] as const) {
		const judged = services.filter((service) => service.n8n === instance);
		const slowest = slowestPoll(judged);
		const boundMs = pollBudgetMs(judged[0]);
		const met = slowest.ms <= boundMs;
		ctx.report.check(
			ITEM,
			`slowest poll on the ${scheduler} scheduler (first request to last answer) / its budget + 1.5 s`,
			`${(slowest.ms / 1000).toFixed(1)} s / ${boundMs / 1000} s`,
			'at most',
			met,
			met ? undefined : slowest.where,
		);
	}
	ctx.report.check(
		ITEM,
		`items expected / reported (${sizes.restarts} restarts of both n8n)`,
		`${expectedItems} / ${reportedItems}`,
		'equal',
		expectedItems === reportedItems,
	);
	ctx.report.check(ITEM, 'polls n8n abandoned for their timeout', abandoned, '0', abandoned === 0);
	ctx.report.check(
		ITEM,
		'poll requests that failed the poll (400) / that were retried (500) / polls',
		`${failedPolls} / ${retried} / ${totalPolls}`,
		'> 0 / > 0 / —',
		failedPolls > 0 && retried > 0,
	);
	if (idleRequests !== undefined)
		ctx.report.info(
			ITEM,
			'requests of the poll after the last change was reported (All Events)',
			idleRequests,
			'—',
			'a follow read and, once they are 5 minutes old, a settle read of the last changes: one list request per 100 such changes per record kind; once they are settled, one request per kind (the in-process test "an idle poll costs one list request per record kind")',
		);
}

/**
 * The change an eventId names, as this soak writes it: an update's eventId ends in a digest of
 * the asset's state, which the soak (apart from the package) does not compute; the asset and its
 * `updatedAt` name the change here, since each asset changes in one moment at most.
 */
function changeOf(eventId: string): string {
	return eventId.replace(/^(asset\.updated:.+):[0-9a-f]{8}$/, '$1');
}

function issue(service: Service, input: Parameters<Simulator['issueInvoice']>[0] = {}): string {
	const number = service.sim.issueInvoice(input).invoice.invoiceNumber;
	service.open.push(number);
	service.expected.add(`invoice.issued:${number}`);
	service.changes += 1;
	return number;
}

/**
 * One change chosen by step: issue, pay, mark overdue, cancel, update or retire. The invoice paid
 * is an overdue one once every workflow has polled it overdue (polling sees records as they are).
 */
function mixedChange(service: Service, step: number) {
	const { sim } = service;
	const kind = step % 10;
	if (kind <= 3 || service.open.length === 0) {
		issue(service);
		return;
	}
	if (kind === 4) {
		const [oldest] = service.overdue;
		const polled = oldest && pollsSince(service, oldest.at) >= POLLS_BEFORE_CHANGING_AGAIN;
		const number = polled ? service.overdue.shift()?.invoiceNumber : service.open.shift();
		sim.payInvoice(number as string);
		service.paid.push(number as string);
		service.expected.add(`invoice.paid:${number}`);
	} else if (kind === 5) {
		const number = service.open.shift() as string;
		sim.markInvoiceOverdue(number);
		service.overdue.push({ invoiceNumber: number, at: Date.now() });
		service.expected.add(`invoice.overdue:${number}`);
	} else if (kind === 6) {
		const number = service.open.shift() as string;
		sim.cancelInvoice(number);
		service.expected.add(`invoice.cancelled:${number}`);
	} else if (kind <= 8 && service.untouchedAssets.length > 0) {
		const asset = sim.updateAsset(service.untouchedAssets.shift() as string).asset;
		service.expected.add(`asset.updated:${asset.assetId}:${asset.updatedAt}`);
	} else if (service.untouchedAssets.length > 0) {
		const assetId = service.untouchedAssets.shift() as string;
		sim.retireAsset(assetId);
		service.expected.add(`asset.retired:${assetId}`);
	} else {
		return;
	}
	service.changes += 1;
}

/**
 * Changes that share a second: an invoice issued and paid at once; an asset updated twice at
 * once (its last state is the change); and edits after a final state: a paid invoice corrected
 * (nothing to report) and a retired asset updated (an Asset Updated).
 */
function sameSecondChange(service: Service, step: number) {
	const { sim } = service;
	switch (step % 4) {
		case 0: {
			const number = issue(service);
			sim.payInvoice(number);
			service.open.pop();
			service.paid.push(number);
			service.expected.add(`invoice.paid:${number}`);
			service.changes += 1;
			return;
		}
		case 1: {
			const assetId = service.untouchedAssets.shift();
			if (!assetId) {
				issue(service);
				return;
			}
			sim.updateAsset(assetId, { site: 'Zurich Lab' });
			const asset = sim.updateAsset(assetId, { site: 'Vienna Office' }).asset;
			service.expected.add(`asset.updated:${asset.assetId}:${asset.updatedAt}`);
			service.changes += 2;
			return;
		}
		case 2: {
			const number = service.paid.shift();
			if (number) sim.editInvoice(number);
			else issue(service);
			service.changes += number ? 1 : 0;
			return;
		}
		default: {
			const assetId = service.untouchedAssets.shift();
			if (!assetId) return;
			sim.retireAsset(assetId);
			service.expected.add(`asset.retired:${assetId}`);
			service.retired.push({ assetId, at: Date.now() });
			service.changes += 1;
			// A retired asset edited once its retirement was surely polled: between two polls,
			// polling would see only the edited state, still retired.
			const [oldest] = service.retired;
			if (oldest && pollsSince(service, oldest.at) >= POLLS_BEFORE_CHANGING_AGAIN) {
				service.retired.shift();
				const edited = sim.updateAsset(oldest.assetId, { site: 'Hamburg Branch' }).asset;
				service.expected.add(`asset.updated:${oldest.assetId}:${edited.updatedAt}`);
				service.changes += 1;
			}
		}
	}
}

/** Invoices listed after their issueDate: issued up to 30 minutes before (never before the start). */
function syncLagChange(service: Service, step: number) {
	if (step % 3 === 2) return mixedChange(service, 4);
	const now = service.sim.clock.now().getTime();
	const issuedAt = Math.max(service.startedAt + 1000, now - ((step * 7919) % 30) * MINUTE);
	issue(service, { issueDate: new Date(issuedAt).toISOString().replace(/\.\d{3}Z$/, 'Z') });
}

/** Mixed changes, and now and then NO_TOTAL_BURST invoices issued in one second. */
function noTotalChange(service: Service, step: number) {
	mixedChange(service, step);
	if (step % 60 !== 30) return;
	for (let index = 0; index < NO_TOTAL_BURST; index++) issue(service);
}

/** Stamps it cannot trust: every fifth new invoice is stamped years ahead, or with no time at all. */
function untrustedStampChange(service: Service, step: number) {
	if (step % 5 !== 0) return mixedChange(service, step);
	const number = issue(service);
	service.open.pop();
	if (step % 10 === 0) service.sim.restamp('invoice', number, '2099-01-01T00:00:00Z');
	else {
		service.sim.restamp('invoice', number, 'not yet stamped', {
			deviation: 'an updatedAt that is no timestamp (the polling soak)',
		});
	}
}

/**
 * Writers whose clocks differ from the service's: every fourth change an asset update stamped 20
 * minutes ahead, beyond the listing bound; every fourth a payment of an invoice issued some 20
 * changes before (polled by then) stamped 30 s before that invoice's issue, so before its state
 * the trigger read (listed well within the bound); else an invoice issued.
 */
function writerClockChange(service: Service, step: number) {
	const { sim } = service;
	const stampOf = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
	const assetId = step % 4 === 3 ? service.untouchedAssets.shift() : undefined;
	if (assetId) {
		sim.updateAsset(assetId);
		const ahead = stampOf(sim.clock.now().getTime() + 20 * MINUTE);
		sim.restamp('asset', assetId, ahead);
		service.expected.add(`asset.updated:${assetId}:${ahead}`);
		service.changes += 1;
		return;
	}
	const [number] = step % 4 === 1 ? service.open.splice(-20, 1) : [];
	if (number === undefined) {
		issue(service);
		return;
	}
	const issuedAt = sim.data
		.invoices()
		.find((invoice) => invoice.invoiceNumber === number)?.updatedAt;
	sim.payInvoice(number);
	sim.restamp('invoice', number, stampOf(Date.parse(String(issuedAt)) - 30_000));
	service.expected.add(`invoice.paid:${number}`);
	service.changes += 1;
}

/**
 * `count` invoices issued at the backlog condition's service, 10 a second by its clock (which
 * leaps ahead with them): seconds a window can be narrowed between.
 */
function burst(service: Service, count: number) {
	for (let index = 0; index < count; index++) {
		issue(service);
		service.sim.clock.advance(100);
	}
	service.open.length = 0;
}

async function executionsWithData(n8n: N8nInstance, workflowId: string): Promise<Execution[]> {
	const listed = await listExecutions(n8n, workflowId);
	return await Promise.all(listed.map(async (entry) => await getExecution(n8n, entry.id)));
}

/**
 * The polls of one workflow at the simulator (groupPolls): a gap of POLL_GAP_MS, a restart of n8n
 * or, after the poll n8n runs at activation, a time of the Poll Times ends a poll. Requests a fault
 * answered carry no client (faults answer before authentication) and are left out.
 */
function pollsOf(service: Service, index: number): RequestLogEntry[][] {
	return groupPolls(
		service.sim.log
			.entries({ clientId: service.clients[index].clientId })
			.filter((entry) => entry.route === 'invoices.list' || entry.route === 'assets.list'),
		service.periods[index],
		{ gapMs: POLL_GAP_MS, restarts: service.restarts, pollTimes: service.pollTimes[index] },
	);
}

/**
 * How long a poll of this service's workflows may take: n8n's budget, which the trigger caps
 * (MAX_POLL_MS), and 1.5 s more, after which its requests are given up
 * (docs/choosing-a-trigger.md#how-the-polling-trigger-loses-nothing-and-repeats-nothing).
 */
function pollBudgetMs(service: Service): number {
	const n8nBudget =
		service.n8n === service.durable ? DURABLE_POLL_BUDGET_MS : LEGACY_POLL_BUDGET_MS;
	return Math.min(n8nBudget, MAX_POLL_MS) + DEADLINE_GRACE_MS;
}

/**
 * A workflow that did not poll when expected, for the error: its last poll at the simulator, its
 * requests since (any route), its last executions and what n8n logged of the workflow last (a
 * failed activation, a retry; each poll n8n began, were its log level debug).
 */
async function whyNoPoll(service: Service, index: number): Promise<string> {
	const last = pollsOf(service, index).at(-1);
	const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;
	const lastPoll = last
		? `its last poll began ${seconds(Date.now() - last[0].receivedAtMs)} ago, made ${last.length} list requests in ${seconds((last.at(-1)?.receivedAtMs ?? 0) - last[0].receivedAtMs)} (last: ${last.at(-1)?.status})`
		: 'no poll';
	const since = last?.at(-1)?.receivedAtMs ?? 0;
	const otherRequests = service.sim.log
		.entries({ clientId: service.clients[index].clientId })
		.filter((entry) => entry.receivedAtMs > since)
		.map((entry) => `${entry.route} ${entry.status}`);
	const workflowId = service.workflowIds[index];
	const workflowName = service.workflowNames[index];
	const logged = service.n8n
		.log()
		.split('\n')
		.filter((line) => line.includes(workflowId) || line.includes(workflowName))
		.slice(-4)
		.map((line) => line.slice(0, 300));
	const lastExecutions = await listExecutions(service.n8n, workflowId).then(
		(executions) =>
			executions.slice(0, 3).map((execution) => {
				// An error execution of a failed poll has no start.
				const at = Date.parse(execution.startedAt ?? execution.stoppedAt ?? '');
				return Number.isNaN(at)
					? execution.status
					: `${execution.status} ${seconds(Date.now() - at)} ago`;
			}),
		(error: Error) => [`unreadable (${error.message})`],
	);
	return [
		`${service.condition}: ${service.clients[index].displayName}, workflow ${workflowId}: ${lastPoll}`,
		`its requests since: ${otherRequests.length > 0 ? otherRequests.slice(-5).join(', ') : 'none'}`,
		`its last executions: ${lastExecutions.length > 0 ? lastExecutions.join(', ') : 'none'}`,
		`n8n logged of it last: ${logged.length > 0 ? logged.join(' | ') : 'nothing'}`,
	].join('; ');
}

/** The fewest polls any workflow of `service` has begun since `at` (ms since the epoch). */
function pollsSince(service: Service, at: number): number {
	return Math.min(
		...service.clients.map(
			(_, index) => pollsOf(service, index).filter((poll) => poll[0].receivedAtMs > at).length,
		),
	);
}

/**
 * The requests of one poll of the first workflow after the sentinel's (a figure of full runs):
 * complete once the next poll has begun.
 */
async function idlePollCost(service: Service): Promise<number> {
	const first = pollsOf(service, 0).length;
	await waitFor('two more polls', () => pollsOf(service, 0).length >= first + 2, 3 * MINUTE, 500);
	return pollsOf(service, 0)[first].length;
}

/** The longest poll of any workflow of `services` (first list request to last answer), and where. */
function slowestPoll(services: Service[]): { ms: number; where: string } {
	let slowest = { ms: 0, where: '' };
	for (const service of services) {
		for (const [index, period] of service.periods.entries()) {
			for (const poll of pollsOf(service, index)) {
				const answered = Math.max(...poll.map((entry) => entry.receivedAtMs + entry.durationMs));
				const ms = answered - poll[0].receivedAtMs;
				if (ms <= slowest.ms) continue;
				const began = new Date(poll[0].receivedAtMs).toISOString().slice(11, 19);
				const where = `${service.condition}, workflow ${index + 1} (${period} s): ${poll.length} list requests from ${began} UTC`;
				slowest = { ms, where };
			}
		}
	}
	return slowest;
}
