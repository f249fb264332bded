/* eslint-disable @n8n/community-nodes/no-restricted-imports */
/**
 * API keys replaced again and again, as the README's "Expiry" section says, on the real
 * n8n while events keep coming. Several published workflows, each with its own credential; in each
 * round every workflow gets a new key (saved as n8n's editor saves it), is unpublished and
 * published, and once the service's retries are over its old key is deleted. Each event must start
 * each workflow exactly once, and at the end no subscription may be left behind.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

import { saveCredentialInEditor } from '../n8n/credentials';
import { eventIdOf, hasEnded, listExecutions, waitFor, waitForEvent } from '../n8n/executions';
import { publishAndSettle } from '../n8n/publication';
import type { ClientRecord } from '../simulator';
import { count } from './report';
import {
	createCredential,
	createWorkflow,
	startTrackedSimulator,
	type CredentialRef,
	type RunContext,
} from './support';
import { TRIGGER_NAME, triggerWorkflow } from './workflows';

const ITEM = '1 soak';

/** The service retries for longer than an unpublish and publish take; "a day" of the README. */
const RETRY_SCHEDULE = [1000, 2000, 4000, 8000];
const RETRY_PERIOD_MS = RETRY_SCHEDULE.reduce((sum, ms) => sum + ms, 0);

interface Rotated {
	workflowId: string;
	webhookId: string;
	credential: CredentialRef;
	key: ClientRecord;
}

export async function keyRotationCheck(ctx: RunContext) {
	const { keyRotationWorkflows: workflows, keyRotations: rounds, keyRotationEventMs } = ctx.sizes;
	const sim = await startTrackedSimulator({
		invoices: 20,
		assets: 5,
		delivery: { retrySchedule: RETRY_SCHEDULE },
	});
	const n8n = await ctx.mainN8n();
	const subscriptionsOf = (webhookId: string) =>
		sim.subscriptions
			.list()
			.filter((subscription) => subscription.notificationUrl.includes(webhookId));
	const emitted: string[] = [];
	let emitting = true;
	const problems: string[] = [];
	try {
		const rotated: Rotated[] = [];
		for (let index = 0; index < workflows; index++) {
			const key = sim.registerClient({ environment: 'production' });
			const credential = await createCredential(n8n, sim, `Key rotation ${index}`, { client: key });
			const webhookId = randomUUID();
			const workflowId = await createWorkflow(
				n8n,
				triggerWorkflow(credential, webhookId, `Key rotation ${index}`),
			);
			const settled = await publishAndSettle(n8n, workflowId, 'publish');
			if (settled.status !== 'published') throw new Error(`publish: ${settled.status}`);
			rotated.push({ workflowId, webhookId, credential, key });
		}
		ctx.say(
			`  key rotation: ${workflows} workflows, ${rounds} rounds, an event every ${keyRotationEventMs} ms`,
		);
		const emitter = (async () => {
			while (emitting) {
				emitted.push(sim.issueInvoice().event.eventId);
				await sleep(keyRotationEventMs);
			}
		})();

		let gapEvents = 0;
		for (let round = 1; round <= rounds; round++) {
			const old: ClientRecord[] = [];
			for (const workflow of rotated) {
				// The README's steps 1 to 3: a new key, saved in the credential, unpublish and publish.
				const key = sim.registerClient({ environment: 'production' });
				const tested = await saveCredentialInEditor(n8n, workflow.credential.id, {
					clientId: key.clientId,
					clientSecret: key.clientSecret,
					keyExpiresOn: key.keyExpiresAt.toISOString().slice(0, 10),
				});
				if (tested.status !== 'OK')
					problems.push(`round ${round}: credential test ${tested.status}`);
				const unpublished = await publishAndSettle(n8n, workflow.workflowId, 'unpublish');
				const firstInGap = emitted.length;
				const published = await publishAndSettle(n8n, workflow.workflowId, 'publish');
				gapEvents += emitted.length - firstInGap;
				if (unpublished.status !== 'not_published' || published.status !== 'published') {
					problems.push(
						`round ${round}: unpublish ${unpublished.status}, publish ${published.status}`,
					);
				}
				old.push(workflow.key);
				workflow.key = key;
			}
			// Step 4, once the service's retries of what fell between unpublish and publish are over.
			await sleep(RETRY_PERIOD_MS + 2000);
			for (const key of old) sim.deleteClient(key.clientId);
			for (const workflow of rotated) {
				const held = subscriptionsOf(workflow.webhookId);
				const owners = held.map((subscription) => sim.subscriptions.ownerOf(subscription.id));
				if (held.length !== 1 || owners[0] !== workflow.key.clientId) {
					problems.push(`round ${round}: ${held.length} subscriptions, not just the new key's`);
				}
			}
			ctx.say(`  key rotation: round ${round} done, ${emitted.length} events so far`);
		}
		emitting = false;
		await emitter;
		await sim.waitForDeliveries(RETRY_PERIOD_MS + 30_000);

		// Every event, in every workflow: its executions, read once a sentinel has run.
		let lost = 0;
		let twice = 0;
		for (const workflow of rotated) {
			const sentinel = sim.issueInvoice().event.eventId;
			// A workflow whose events stopped never runs it: then its executions are counted as they are.
			await waitForEvent(n8n, workflow.workflowId, TRIGGER_NAME, sentinel, {
				timeoutMs: 120_000,
			}).catch(() => problems.push(`workflow ${workflow.workflowId}: the last event never ran`));
			const executions = await waitFor(
				'every execution to end',
				async () => {
					const list = await listExecutions(n8n, workflow.workflowId, true);
					return list.every(hasEnded) ? list : undefined;
				},
				300_000,
				1000,
			);
			const runs = new Map<string, number>();
			for (const execution of executions) {
				const eventId = eventIdOf(execution, TRIGGER_NAME) ?? '';
				runs.set(eventId, (runs.get(eventId) ?? 0) + 1);
			}
			lost += emitted.filter((eventId) => !runs.has(eventId)).length;
			twice += [...runs.values()].filter((times) => times > 1).length;
		}

		// The end: unpublished, nothing may be left at the service.
		for (const workflow of rotated) await publishAndSettle(n8n, workflow.workflowId, 'unpublish');
		await sleep(2000);
		const left = rotated.flatMap((workflow) => subscriptionsOf(workflow.webhookId)).length;

		ctx.report.check(
			ITEM,
			`key rotation: ${rounds} rounds over ${workflows} workflows while ${count(emitted.length)} events came (${count(gapEvents)} while a workflow was being unpublished and published): events lost / run twice / subscriptions left behind`,
			`${lost} / ${twice} / ${left}`,
			'0 / 0 / 0',
			lost === 0 && twice === 0 && left === 0,
		);
		ctx.report.check(
			ITEM,
			'key rotation: steps gone wrong (a failed save, unpublish or publish, not exactly the new key’s subscription once the old key was deleted, a last event that never ran)',
			problems.length,
			'0',
			problems.length === 0,
			problems.length ? problems.slice(0, 4).join(' | ') : undefined,
		);
	} finally {
		emitting = false;
		await sim.close();
	}
}
