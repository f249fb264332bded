/* eslint-disable @n8n/community-nodes/no-restricted-imports */
/**
 * The polling soak (issue 15): published Polling Triggers in a real n8n 2.41.1 poll two
 * simulators, one whose clock is 3 minutes ahead of n8n's and one 3 minutes behind, while records
 * change at both (invoices issued, paid, cancelled; assets updated, retired), about 10 % of the
 * poll requests fail (half with a 400 that fails the poll, half with a 500 that is retried), and
 * n8n is restarted twice, with changes made while it is down. Every workflow must report every
 * change made after its baseline once: 0 lost, 0 twice. n8n polls at most once a minute, so the
 * polls come from several workflows at once (each with its own API key, so that its polls can be
 * counted at the simulator).
 *
 * Polling sees records as they are: of two updates of one asset between two polls it reports
 * the last. So each asset is updated (or retired) at most once here, and invoices change by
 * status, which polling tells apart whatever happened between two polls.
 */
import { setTimeout as sleep } from 'node:timers/promises';

import { getExecution, listExecutions, nodeOutput, waitFor } from '../n8n/executions';
import { N8nInstance } from '../n8n/instance';
import { onShutdown } from '../n8n/shutdown';
import type { ClientRecord, Simulator } from '../simulator';
import { CREDENTIAL_TYPE, POLLING_NODE_NAME, pollingWorkflow } from '../e2e/workflows';
import { startTrackedSimulator, type RunContext } from './support';

const ITEM = '8 polling';
const MINUTE = 60_000;

export interface PollingSizes {
	/** Workflows per simulator (each polls once a minute). */
	workflowsPerService: number;
	/** Changes per simulator. */
	changesPerService: number;
	/** Minutes over which the changes are spread. */
	minutes: number;
	restarts: number;
}

export const FULL_POLLING: PollingSizes = {
	workflowsPerService: 5,
	changesPerService: 2600,
	minutes: 11,
	restarts: 2,
};

export const CI_POLLING: PollingSizes = {
	workflowsPerService: 1,
	changesPerService: 150,
	minutes: 3,
	restarts: 1,
};

interface Service {
	name: string;
	sim: Simulator;
	clients: ClientRecord[];
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
		const clients = Array.from({ length: sizes.workflowsPerService }, (_, index) =>
			sim.registerClient({ environment: 'production', displayName: `poller ${index + 1}` }),
		);
		services.push({
			name,
			sim,
			clients,
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
		ctx.say(`polling: starting n8n, ${services.length * sizes.workflowsPerService} workflows`);
		await n8n.start();
		for (const service of services) {
			for (const client of service.clients) {
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
					pollingWorkflow({ id: credential.body.id, name: credential.body.name }, ['*']),
				);
				if (workflow.status !== 200) throw new Error(`workflow: ${workflow.status}`);
				const published = await n8n.api('POST', `/workflows/${workflow.body.id}/publish`);
				if (published.status !== 200) throw new Error(`publish: ${published.status}`);
				service.workflowIds.push(workflow.body.id);
			}
		}
		// Every workflow's baseline: its first poll read both lists.
		for (const service of services) {
			for (const client of service.clients) {
				await waitFor(`${service.name} baseline of ${client.clientId}`, () =>
					polls(service.sim, client.clientId, 'assets.list') >= 1 ? true : undefined,
				);
			}
		}
		for (const service of services) {
			// 5 % of the poll requests fail the poll (400, not retried), 5 % are retried (500); the
			// first asset list request fails for sure, so that even a short run sees a failed poll.
			service.sim.faults.add({ route: 'assets.list', status: 400, times: 1 });
			for (const route of ['invoices.list', 'assets.list'] as const) {
				service.sim.faults.add({ route, status: 400, probability: 0.05 });
				service.sim.faults.add({ route, status: 500, probability: 0.05 / 0.95 });
			}
		}

		const startedChanges = Date.now();
		const totalMs = sizes.minutes * MINUTE;
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

		// Every workflow polls at least twice more (the second to show nothing comes twice).
		const pollsNow = services.map((service) =>
			service.clients.map((client) => polls(service.sim, client.clientId, 'assets.list')),
		);
		await waitFor(
			'two more polls of every workflow',
			() =>
				services.every((service, s) =>
					service.clients.every(
						(client, c) => polls(service.sim, client.clientId, 'assets.list') >= pollsNow[s][c] + 2,
					),
				),
			4 * MINUTE,
			1000,
		);
		await sleep(5000);
		const idleRequests = await idlePollCost(services[0]);

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
				const executions = await listExecutions(n8n, workflowId);
				const ids: string[] = [];
				for (const entry of executions) {
					const full = await getExecution(n8n, entry.id);
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
				totalPolls += polls(service.sim, client.clientId, 'invoices.list');
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
		const minPolls = ctx.ci ? 2 * sizes.minutes : 100;
		ctx.report.check(
			ITEM,
			'changes made at the services / polls by the workflows',
			`${changes} / ${totalPolls}`,
			ctx.ci ? '≥ 300 / ≥ 6' : '≥ 5,000 / ≥ 100',
			changes >= (ctx.ci ? 300 : 5000) && totalPolls >= minPolls,
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
		ctx.report.info(
			ITEM,
			'requests of the first poll after the changes stopped (All Events)',
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

/** Polls of one workflow: its requests for the first page of a list. */
function polls(sim: Simulator, clientId: string, route: 'invoices.list' | 'assets.list'): number {
	return sim.log
		.entries({ route, clientId })
		.filter((entry) => entry.query.page === '1' && entry.status !== 400).length;
}

/** Requests one more poll of the first workflow makes when nothing has changed since the last. */
async function idlePollCost(service: Service): Promise<number> {
	const { sim } = service;
	const clientId = service.clients[0].clientId;
	const before = sim.log.entries().at(-1)?.seq ?? 0;
	const done = polls(sim, clientId, 'assets.list') + 1;
	await waitFor('an idle poll', () => polls(sim, clientId, 'assets.list') >= done, 2 * MINUTE, 500);
	await sleep(2000);
	return sim.log.entries({ clientId }).filter((entry) => entry.seq > before).length;
}
