/* eslint-disable @n8n/community-nodes/no-restricted-globals */
/**
 * Subscriptions left behind, under load and over time, in process (n8n-core's engine, the
 * simulator over HTTPS), apart from soak.ts: publish cycles that meet a create committed late
 * behind a lost answer, an API key replaced while published, a workflow imported with another's
 * static data, and a failed delete followed by other events. Every subscription still at the
 * simulator at the end must be one a trigger keeps, or one the user was told about by ID.
 */
import type { INodeCredentialsDetails } from 'n8n-workflow';

import { credentialFor, startTestbed } from '../harness/testbed';
import { TriggerHost } from '../harness/webhooks';
import { trackTestbed, type RunContext } from './support';

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
