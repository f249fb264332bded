/* eslint-disable @n8n/community-nodes/no-restricted-imports */
/**
 * The polling soak (issue 15): published Polling Triggers in a real n8n 2.41.1 poll two
 * simulators, one whose clock is 3 minutes ahead of n8n's and one 3 minutes behind, while records
 * change at both (invoices issued, paid, cancelled; assets updated, retired), about 10 % of the
 * poll requests fail (half with a 400 that fails the poll, half with a 500 that is retried), and
 * n8n is restarted twice, with changes made while it is down. Every workflow must report every
 * change made after its baseline once: 0 lost, 0 twice. The workflows poll every 10 s (15 s at
 * full size, where a poll reads more pages; test/n8n/polling.ts), above the slowest poll, which
 * the soak measures; at full size one more workflow per service polls Every Minute, as users
 * set it. Each workflow has its own API key, so that its polls can be counted at the simulator.
 *
 * Polling sees records as they are: of two updates of one asset between two polls it reports
 * the last. So each asset is updated (or retired) at most once here, and invoices change by
 * status, which polling tells apart whatever happened between two polls.
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
import { EVERY_MINUTE, pollEvery, waitForPolledEvent, type PollTimes } from '../n8n/polling';
import { settledPublication } from '../n8n/publication';
import { onShutdown } from '../n8n/shutdown';
import type { ClientRecord, RequestLogEntry, Simulator } from '../simulator';
import { CREDENTIAL_TYPE, POLLING_NODE_NAME, pollingWorkflow } from '../e2e/workflows';
import { startTrackedSimulator, type RunContext } from './support';

const ITEM = '8 polling';
const MINUTE = 60_000;

export interface PollingSizes {
	/** Workflows per simulator that poll every `pollSeconds`. */
	workflowsPerService: number;
	pollSeconds: number;
	/** One more workflow per simulator on Every Minute. */
	everyMinute: boolean;
	/** Changes per simulator. */
	changesPerService: number;
	/** Seconds over which the changes are spread. */
	seconds: number;
	restarts: number;
}

export const FULL_POLLING: PollingSizes = {
	workflowsPerService: 5,
	pollSeconds: 15,
	everyMinute: true,
	changesPerService: 2600,
	seconds: 11 * 60,
	restarts: 2,
};

/** Each check of the soak still fails at this size on its mutation (CONTRIBUTING.md). */
export const CI_POLLING: PollingSizes = {
	workflowsPerService: 1,
	pollSeconds: 10,
	everyMinute: false,
	changesPerService: 150,
	seconds: 90,
	restarts: 1,
};

interface Service {
	name: string;
	sim: Simulator;
	clients: ClientRecord[];
	/** Poll Times of each client's workflow, and their period (seconds). */
	pollTimes: PollTimes[];
	periods: number[];
	workflowIds: string[];
	/** eventIds of the changes made after every workflow's baseline. */
	expected: Set<string>;
	/** The invoices issued here and not yet paid or cancelled; the assets not changed yet. */
	open: string[];
	untouchedAssets: string[];
	changes: number;
}

export async function pollingSoakCheck(ctx: RunContext) {
	const sizes = ctx.ci ? CI_POLLING : FULL_POLLING;
	const services: Service[] = [];
	for (const [name, offset] of [
		['ahead', 3 * MINUTE],
		['behind', -3 * MINUTE],
	] as const) {
		const sim = await startTrackedSimulator({
			invoices: 50,
			assets: sizes.changesPerService,
			clockOffsetMs: offset,
		});
		const pollTimes = [
			...Array.from({ length: sizes.workflowsPerService }, () => pollEvery(sizes.pollSeconds)),
			...(sizes.everyMinute ? [EVERY_MINUTE] : []),
		];
		const periods = pollTimes.map((times) => (times === EVERY_MINUTE ? 60 : sizes.pollSeconds));
		const clients = pollTimes.map((_, index) =>
			sim.registerClient({ environment: 'production', displayName: `poller ${index + 1}` }),
		);
		services.push({
			name,
			sim,
			clients,
			pollTimes,
			periods,
			workflowIds: [],
			expected: new Set(),
			open: [],
			untouchedAssets: sim.data
				.assets()
				.filter((asset) => asset.status !== 'retired')
				.map((asset) => asset.assetId),
			changes: 0,
		});
	}
	const n8n = new N8nInstance({ name: 'reliability-polling' });
	const forget = onShutdown(async () => await n8n.dispose());
	try {
		const workflows = services.reduce((sum, service) => sum + service.clients.length, 0);
		ctx.say(
			`polling: starting n8n, ${workflows} workflows (every ${sizes.pollSeconds} s${sizes.everyMinute ? ', and Every Minute' : ''})`,
		);
		await n8n.start();
		for (const service of services) {
			for (const [index, client] of service.clients.entries()) {
				const credential = await n8n.api<{ id: string; name: string }>('POST', '/credentials', {
					name: `${service.name} ${client.displayName}`,
					type: CREDENTIAL_TYPE,
					data: {
						environment: 'production',
						baseUrl: service.sim.serviceUrl,
						identityUrl: service.sim.identityUrl,
						scope: client.scope,
						clientId: client.clientId,
						clientSecret: client.clientSecret,
					},
				});
				if (credential.status !== 200) throw new Error(`credential: ${credential.status}`);
				const workflow = await n8n.api<{ id: string }>(
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
			}
		}
		// Every workflow's baseline: its first poll, part of its registration, has read both lists.
		for (const service of services) {
			for (const workflowId of service.workflowIds) {
				const settled = await settledPublication(n8n, workflowId);
				if (settled.status !== 'published') {
					throw new Error(`workflow ${workflowId}: ${JSON.stringify(settled)}`);
				}
			}
		}
		for (const service of services) {
			// 5 % of the poll requests fail the poll (400, not retried), 5 % are retried (500); the
			// first asset list request of each kind fails for sure, so that even a short run sees both.
			service.sim.faults.add({ route: 'assets.list', status: 400, times: 1 });
			service.sim.faults.add({ route: 'invoices.list', status: 500, times: 1 });
			for (const route of ['invoices.list', 'assets.list'] as const) {
				service.sim.faults.add({ route, status: 400, probability: 0.05 });
				service.sim.faults.add({ route, status: 500, probability: 0.05 / 0.95 });
			}
		}

		const startedChanges = Date.now();
		const totalMs = sizes.seconds * 1000;
		const restartAt = Array.from(
			{ length: sizes.restarts },
			(_, index) => ((index + 1) * totalMs) / (sizes.restarts + 1),
		);
		let restarted = 0;
		const perService = sizes.changesPerService;
		for (let step = 0; step < perService; step++) {
			for (const service of services) change(service, step);
			const due = startedChanges + ((step + 1) * totalMs) / perService;
			if (restarted < restartAt.length && Date.now() - startedChanges >= restartAt[restarted]) {
				restarted += 1;
				ctx.say(`polling: restart ${restarted} of n8n; changes go on while it is down`);
				await n8n.stop();
				for (let extra = 0; extra < 20; extra++) {
					for (const service of services) change(service, step);
				}
				await n8n.start();
			}
			const wait = due - Date.now();
			if (wait > 0) await sleep(wait);
		}
		ctx.say(
			`polling: ${services.map((service) => `${service.changes} changes (${service.name})`).join(', ')}; waiting for the last polls`,
		);
		for (const service of services) service.sim.faults.clear();

		// One more poll of every workflow after the changes, then a sentinel invoice at each
		// service: once every workflow has an ended execution reporting it, and none running,
		// every poll before it has ended and shown what it emitted, the poll after the changes
		// (which read them all again) included.
		const pollsNow = services.map((service) =>
			service.clients.map((client, c) => pollsOf(service, client, c).length),
		);
		await waitFor(
			'one more poll of every workflow',
			() =>
				services.every((service, s) =>
					service.clients.every((client, c) => pollsOf(service, client, c).length > pollsNow[s][c]),
				),
			(sizes.everyMinute ? 3 : 1) * MINUTE,
			500,
		);
		const executionsOf = new Map<string, Execution[]>();
		for (const service of services) {
			const sentinel = service.sim.issueInvoice().invoice.invoiceNumber;
			service.expected.add(`invoice.issued:${sentinel}`);
			for (const workflowId of service.workflowIds) {
				// A sentinel that never comes is a lost change like any other: counted below.
				const executions = await waitForPolledEvent(
					n8n,
					workflowId,
					POLLING_NODE_NAME,
					`invoice.issued:${sentinel}`,
					(sizes.everyMinute ? 3 : 1) * MINUTE,
				).catch(async () => await executionsWithData(n8n, workflowId));
				executionsOf.set(workflowId, executions);
			}
		}
		const idleRequests = ctx.ci ? undefined : await idlePollCost(services[0]);
		const slowest = slowestPoll(services);

		let lost = 0;
		let twice = 0;
		let unexpected = 0;
		let reportedItems = 0;
		let failedPolls = 0;
		let totalPolls = 0;
		let retried = 0;
		for (const service of services) {
			for (const [index, workflowId] of service.workflowIds.entries()) {
				const client = service.clients[index];
				const ids: string[] = [];
				for (const full of executionsOf.get(workflowId) ?? []) {
					ids.push(
						...nodeOutput(full, POLLING_NODE_NAME).map((item) =>
							changeOf(String(item.json.eventId)),
						),
					);
				}
				reportedItems += ids.length;
				const seen = new Set(ids);
				twice += ids.length - seen.size;
				for (const id of service.expected) if (!seen.has(id)) lost += 1;
				for (const id of seen) if (!service.expected.has(id)) unexpected += 1;
				totalPolls += pollsOf(service, client, index).length;
			}
			// Faults answer before authentication, so they are counted per service, not per API key.
			for (const route of ['invoices.list', 'assets.list'] as const) {
				failedPolls += service.sim.log.count(route, { status: 400 });
				retried += service.sim.log.count(route, { status: 500 });
			}
		}
		const changes = services.reduce((sum, service) => sum + service.changes, 0);
		const expectedItems = services.reduce(
			(sum, service) => sum + service.expected.size * service.workflowIds.length,
			0,
		);
		// At least half the polls the Poll Times schedule while the changes are made.
		const minPolls = Math.floor(
			(services.length * sizes.workflowsPerService * sizes.seconds) / sizes.pollSeconds / 2,
		);
		const minChanges = ctx.ci ? 300 : 5000;
		ctx.report.check(
			ITEM,
			'changes made at the services / polls by the workflows',
			`${changes} / ${totalPolls}`,
			`≥ ${minChanges.toLocaleString('en')} / ≥ ${minPolls}`,
			changes >= minChanges && totalPolls >= minPolls,
		);
		ctx.report.check(
			ITEM,
			`slowest poll (first to last request) / the period of the Poll Times, which the soak's polls must not outlast`,
			`${(slowest / 1000).toFixed(1)} s / ${sizes.pollSeconds} s`,
			`< ${sizes.pollSeconds} s`,
			slowest < sizes.pollSeconds * 1000,
		);
		ctx.report.check(
			ITEM,
			`items expected / reported (${sizes.restarts} n8n restarts, service clocks 3 min ahead and behind)`,
			`${expectedItems} / ${reportedItems}`,
			'equal',
			expectedItems === reportedItems,
		);
		ctx.report.check(ITEM, 'changes lost (summed over the workflows)', lost, '0', lost === 0);
		ctx.report.check(ITEM, 'changes reported twice', twice, '0', twice === 0);
		ctx.report.check(ITEM, 'events for no change made', unexpected, '0', unexpected === 0);
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
				'it reads the last 5 minutes of changes again (the overlap): one list request per 100 such changes per record kind; once nothing has changed for 5 minutes, one request per kind (the in-process test "an idle poll costs one list request per record kind")',
			);
	} finally {
		forget();
		await n8n.dispose();
		for (const service of services) await service.sim.close();
	}
}

/**
 * The change an eventId names, as this soak writes it: an update's eventId ends in a digest of
 * the asset's state, which the soak (apart from the package) does not compute; the asset and its
 * `updatedAt` name the change here, since each asset changes at most once.
 */
function changeOf(eventId: string): string {
	return eventId.replace(/^(asset\.updated:.+):[0-9a-f]{8}$/, '$1');
}

/** One change at a service, chosen by step: issue, pay, cancel, update or retire. */
function change(service: Service, step: number) {
	const { sim } = service;
	const kind = step % 10;
	if (kind <= 3 || service.open.length === 0) {
		const number = sim.issueInvoice().invoice.invoiceNumber;
		service.open.push(number);
		service.expected.add(`invoice.issued:${number}`);
	} else if (kind <= 5) {
		const number = service.open.shift() as string;
		sim.payInvoice(number);
		service.expected.add(`invoice.paid:${number}`);
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

async function executionsWithData(n8n: N8nInstance, workflowId: string): Promise<Execution[]> {
	const listed = await listExecutions(n8n, workflowId);
	return await Promise.all(listed.map(async (entry) => await getExecution(n8n, entry.id)));
}

/**
 * The polls of one workflow at the simulator: its list requests, grouped into polls (a gap of
 * half its Poll Times' period ends one). How many requests a poll makes (pages, windows, kinds)
 * is the node's business; that polls come a period apart is n8n's. Requests a fault answered
 * carry no client (faults answer before authentication) and are left out.
 */
function pollsOf(service: Service, client: ClientRecord, index: number): RequestLogEntry[][] {
	const gapMs = (service.periods[index] * 1000) / 2;
	const groups: RequestLogEntry[][] = [];
	for (const entry of service.sim.log.entries({ clientId: client.clientId })) {
		if (entry.route !== 'invoices.list' && entry.route !== 'assets.list') continue;
		const current = groups.at(-1);
		const last = current?.at(-1);
		if (current && last && entry.receivedAtMs - last.receivedAtMs < gapMs) current.push(entry);
		else groups.push([entry]);
	}
	return groups;
}

/**
 * The requests of one poll of the first workflow after the sentinel's (a figure of full runs):
 * complete once the next poll has begun.
 */
async function idlePollCost(service: Service): Promise<number> {
	const [client] = service.clients;
	const first = pollsOf(service, client, 0).length;
	await waitFor(
		'two more polls',
		() => pollsOf(service, client, 0).length >= first + 2,
		3 * MINUTE,
		500,
	);
	return pollsOf(service, client, 0)[first].length;
}

/** The longest poll of any workflow: from its first list request to its last. */
function slowestPoll(services: Service[]): number {
	let slowest = 0;
	for (const service of services) {
		for (const [index, client] of service.clients.entries()) {
			for (const poll of pollsOf(service, client, index)) {
				slowest = Math.max(slowest, (poll.at(-1)?.receivedAtMs ?? 0) - poll[0].receivedAtMs);
			}
		}
	}
	return slowest;
}
