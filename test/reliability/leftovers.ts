/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/**
 * Identity-service faults and subscriptions left behind, under load and over time, in process
 * (n8n-core's engine, the simulator over HTTPS), apart from soak.ts:
 * - identity-service faults during three simulated hours of token renewals: many credentials
 *   (so many token requests), 10 % of the token requests answered 503 or 429 (Retry-After 1 s),
 *   left without an answer past the 30 s timeout, or dropped; every item is checked against the
 *   simulator's record (0 failed items);
 * - subscriptions left behind: publish cycles that meet a create committed late behind a lost
 *   answer, an API key replaced while published, a workflow imported with another's static data,
 *   and a failed delete followed by other events. Every subscription still at the simulator at the
 *   end must be one a trigger keeps, or one the user was told about by ID.
 */
import { isDeepStrictEqual } from 'node:util';

import type { INodeCredentialsDetails } from 'n8n-workflow';

import { credentialFor, startTestbed } from '../harness/testbed';
import { TriggerHost } from '../harness/webhooks';
import { exclusiveFaults } from './action-faults';
import { count } from './report';
import { printable, trackTestbed, type RunContext } from './support';

const MINUTE = 60_000;

export async function identityFaultsCheck(ctx: RunContext) {
	const ITEM = '5 token';
	const credentials = ctx.ci ? 20 : 40;
	const stepMinutes = 10;
	const hours = 3;
	const testbed = trackTestbed(await startTestbed({ invoices: 50, assets: 5 }));
	const { sim, harness } = testbed;
	try {
		const route = 'token' as const;
		for (const rule of exclusiveFaults([
			{ route, status: 503, share: 0.025 },
			{ route, status: 429, retryAfter: 1, share: 0.025 },
			{ route, latencyMs: 31_000, share: 0.025 },
			{ route, drop: true, share: 0.025 },
		])) {
			sim.faults.add(rule);
		}
		const kinds = ['503', '429', 'timeout', 'dropped'];
		const keys: INodeCredentialsDetails[] = Array.from({ length: credentials }, () =>
			harness.addCredential(credentialFor(sim)),
		);
		const numbers = sim.data.invoices().map((invoice) => invoice.invoiceNumber);
		ctx.say(
			`  token faults: ${credentials} credentials, a run each every ${stepMinutes} simulated minutes for ${hours} h; 10 % of token requests 503/429/timeout/dropped`,
		);
		let items = 0;
		let failed = 0;
		const failures: string[] = [];
		for (let minute = 0; minute < hours * 60; minute += stepMinutes) {
			if (minute > 0) sim.clock.advance(stepMinutes * MINUTE);
			await Promise.all(
				keys.map(async (credential, index) => {
					const list = [0, 1].map((item) => numbers[(minute + index * 3 + item) % numbers.length]);
					items += list.length;
					const run = await harness.runNode({
						parameters: {
							resource: 'invoice',
							operation: 'get',
							invoiceNumber: { __rl: true, mode: 'number', value: '={{ $json.invoiceNumber }}' },
							options: {},
						},
						input: list.map((invoiceNumber) => ({ json: { invoiceNumber } })),
						credential,
						continueOnFail: true,
					});
					const right = run.items.filter((item, position) =>
						isDeepStrictEqual(item.json, sim.data.invoice(list[position])),
					).length;
					if (run.error || right !== list.length) {
						failed += list.length - right;
						const failedItem = run.items.find((item) => item.json.error !== undefined)?.json;
						const message = run.error
							? `${run.error.message} ${run.error.description ?? ''}`
							: `${String(failedItem?.error ?? '')} ${String(failedItem?.details ?? '')}`;
						ctx.errorMessages.push(message);
						failures.push(`minute ${minute}: ${printable(message.slice(0, 160))}`);
					}
				}),
			);
		}
		const hits = sim.faults.list().map((fault) => fault.hits);
		const tokenRequests = sim.log.count('token');
		ctx.report.check(
			ITEM,
			`items failed over ${hours} simulated hours with identity-service faults (${count(items)} items, ${credentials} credentials)`,
			failed,
			'0',
			failed === 0,
			failures.length ? failures.slice(0, 3).join(' | ') : undefined,
		);
		ctx.report.check(
			ITEM,
			'token requests answered with a fault (503 / 429 / timeout / dropped) of all token requests',
			`${hits.join(' / ')} of ${tokenRequests} (${((hits.reduce((sum, hit) => sum + hit, 0) / Math.max(1, tokenRequests)) * 100).toFixed(1)} %)`,
			`faults of each kind (${kinds.join(', ')})`,
			hits.reduce((sum, hit) => sum + hit, 0) > 0,
		);
		ctx.report.info(
			ITEM,
			'tokens issued (one per credential per hour, plus answers lost on the way)',
			sim.log.tokensIssued(),
			`${credentials * hours}–${credentials * (hours + 1)} + lost answers`,
		);
	} finally {
		await testbed.close();
	}
}

export async function leftoversCheck(ctx: RunContext) {
	const ITEM = '1 soak';
	const cycles = ctx.ci ? 8 : 40;
	const testbed = trackTestbed(await startTestbed({ invoices: 10, assets: 5 }));
	const { sim, harness } = testbed;
	const hosts: TriggerHost[] = [];
	const start = async (
		credential: INodeCredentialsDetails,
		events: string[],
		workflowId?: string,
	) => {
		const host = await TriggerHost.start({
			harness,
			credential,
			caDir: sim.caDir,
			parameters: { events },
			workflowId,
		});
		hosts.push(host);
		return host;
	};
	/** Every error message a user was shown, to find the subscriptions they were told about. */
	const told: string[] = [];
	const attempt = async (step: () => Promise<void>) =>
		await step().catch((error: Error & { description?: string }) => {
			told.push(`${error.message} ${error.description ?? ''}`);
			ctx.errorMessages.push(error.message);
		});
	const cases = [
		'late commit',
		'key replaced',
		'imported static data',
		'failed delete, other events',
	];
	ctx.say(`  leftovers: ${cycles} publish cycles over ${cases.join(', ')}`);
	try {
		for (let cycle = 0; cycle < cycles; cycle++) {
			const kind = cases[cycle % cases.length];
			const oldKey = sim.registerClient({ environment: 'production' });
			const credential = harness.addCredential(credentialFor(sim, oldKey));
			// As the editor saves a new key: the hidden token stays.
			const useKey = (key: typeof oldKey) =>
				harness.credentials.edit(credential.id ?? '', {
					clientId: key.clientId,
					clientSecret: key.clientSecret,
				});
			const host = await start(credential, ['invoice.issued'], `workflow-${cycle}`);
			if (kind === 'late commit') {
				sim.setCreateCommitDelay(1500);
				sim.faults.add({
					route: 'subscriptions.create',
					drop: true,
					afterHandling: true,
					times: 1,
				});
				await attempt(async () => await host.publish());
				sim.setCreateCommitDelay(undefined);
				await attempt(async () => await host.unpublish());
			} else if (kind === 'key replaced') {
				// The README's "Expiry" steps: new key saved, unpublish and publish, old key deleted.
				await host.publish();
				const newKey = sim.registerClient({ environment: 'production' });
				useKey(newKey);
				await attempt(async () => await host.unpublish());
				await attempt(async () => await host.publish());
				sim.deleteClient(oldKey.clientId);
				await attempt(async () => await host.unpublish());
			} else if (kind === 'imported static data') {
				await host.publish();
				const imported = await start(credential, ['invoice.issued'], `imported-${cycle}`);
				imported.importStaticData(host.workflowStaticData);
				await attempt(async () => await imported.publish());
				await attempt(async () => await imported.unpublish());
				await attempt(async () => await host.unpublish());
			} else {
				await host.publish();
				const fault = sim.faults.add({ route: 'subscriptions.delete', status: 500 });
				await attempt(async () => await host.unpublish());
				sim.faults.remove(fault.id);
				host.setParameters({ events: ['invoice.paid'] });
				await attempt(async () => await host.publish());
				await attempt(async () => await host.unpublish());
			}
		}
		// Late commits that no cycle waited for land within their delay.
		await new Promise((resolve) => setTimeout(resolve, 2000));
		const kept = new Set(
			hosts.map((host) => host.nodeStaticData.subscriptionId).filter((id) => id !== undefined),
		);
		const left = sim.subscriptions.list().filter((subscription) => !kept.has(subscription.id));
		const unnamed = left.filter(
			(subscription) => !told.some((text) => text.includes(subscription.id)),
		);
		ctx.report.check(
			ITEM,
			`subscriptions left behind after ${cycles} cycles (late commit, key replaced, imported static data, failed delete then other events) / of them never named to the user`,
			`${left.length} / ${unnamed.length}`,
			'0 / 0',
			unnamed.length === 0 && left.length === 0,
			left.length ? `left: ${left.map((subscription) => subscription.id).join(', ')}` : undefined,
		);
		ctx.report.info(ITEM, 'errors shown to the user in these cycles', told.length);
	} finally {
		for (const host of hosts) await host.close();
		await testbed.close();
	}
}
