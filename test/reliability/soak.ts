/**
 * The subscription lifecycle under faults, against the real n8n.
 *
 * soakCheck: publish/unpublish cycles of one trigger workflow on an n8n started in legacy
 * publication mode (N8N_USE_WORKFLOW_PUBLICATION_SERVICE=false from its first start: the mode is
 * never switched on one user folder), with n8n restarts while the workflow is published. 10% of
 * the calls to each subscription endpoint fail: 500 before the service does anything, a dropped
 * connection before it, or a dropped connection after it did the work (the answer lost on its way
 * back, the case that can leave an orphan). Every registration is checked at the service (one
 * subscription, carrying the key whose hash n8n stored) and by a delivery; every failed one must
 * be surfaced: publish answers 400 with the node's message, and /rest/active-workflows/error/{id}
 * has it.
 *
 * defaultModeCyclesCheck: the same faults on the main n8n in the default publication mode, where
 * publish answers at once and n8n registers (and retries) in the background; some cycles unpublish
 * without waiting. Failures must show in /rest/workflows/{id}/publication-status.
 */
import { createHash, randomUUID } from 'node:crypto';

import { DELIVERY_KEY_PARAMETER } from '../../nodes/InvoicingAssets/transport/contract';
import { waitFor } from '../n8n/executions';
import { N8nInstance } from '../n8n/instance';
import { publicationStatus, settledPublication } from '../n8n/publication';
import { watchSubscriptions } from '../n8n/subscriptions';
import type { RouteName, Simulator } from '../simulator';
import { count } from './report';
import {
	createCredential,
	createWorkflow,
	exclusiveFaults,
	httpsAgent,
	post,
	printable,
	startTrackedSimulator,
	type RunContext,
} from './support';
import { TRIGGER_NAME, triggerWorkflow } from './workflows';

const ITEM = '1 soak';
const SUBSCRIPTION_ROUTES: RouteName[] = [
	'subscriptions.create',
	'subscriptions.list',
	'subscriptions.delete',
];

/** The messages a failed registration may carry: the node's own or n8n's wording, never a bare technical one. */
const CLEAR_REGISTRATION_FAILURE =
	/^(The service was not able to process your request|Bad gateway - |Service unavailable - |Gateway timed out - |The connection (to the server was closed unexpectedly|was aborted|timed out)|The service answered without the new subscription’s ID)/;

/**
 * What n8n logs when it stops waiting for trigger work an unpublish abandoned (its publication
 * lease ran out): that work may still create a subscription afterwards.
 */
const ABANDONED_OPERATIONS = /abandoned trigger operations still pending/;

/** n8n's TRIGGER_ACTIVATION_MAX_ATTEMPTS: in the default publication mode a failed create is tried this often. */
const N8N_ACTIVATION_ATTEMPTS = 5;

/**
 * 10% of every subscription call fails at random; before those rules, a create answered 500
 * `deterministicCreateFailures` times in a row, so that at least one registration fails whatever
 * the random draw (in the first cycle: n8n's own attempts included) and the "surfaced clearly"
 * figures always see a failure.
 */
function addSubscriptionFaults(sim: Simulator, deterministicCreateFailures: number) {
	sim.faults.add({
		route: 'subscriptions.create',
		status: 500,
		times: deterministicCreateFailures,
	});
	for (const route of SUBSCRIPTION_ROUTES) {
		for (const rule of exclusiveFaults([
			{ route, status: 500, share: 0.04 },
			{ route, drop: true, share: 0.03 },
			{ route, drop: true, afterHandling: true, share: 0.03 },
		])) {
			sim.faults.add(rule);
		}
	}
}

/** The faults injected so far, from the request log (a used-up `times` rule leaves the list). */
function faultSummary(sim: Simulator): { injected: number; text: string } {
	const hits = new Map<string, number>();
	let calls = 0;
	for (const route of SUBSCRIPTION_ROUTES) {
		for (const entry of sim.log.entries({ route })) {
			calls += 1;
			if (!entry.fault) continue;
			// A dropped connection is logged without a status, before or after the service acted.
			const kind = entry.fault === 'drop' ? 'dropped' : `${entry.status}`;
			hits.set(kind, (hits.get(kind) ?? 0) + 1);
		}
	}
	const injected = [...hits.values()].reduce((sum, n) => sum + n, 0);
	return {
		injected,
		text: `${count(injected)} of ${count(calls)} subscription calls (${((injected / Math.max(calls, 1)) * 100).toFixed(1)} %): ${[...hits].map(([kind, n]) => `${n} ${kind}`).join(', ')}`,
	};
}

export async function soakCheck(ctx: RunContext) {
	const { soakCycles, soakRestarts } = ctx.sizes;
	const sim = await startTrackedSimulator({ invoices: 20, assets: 5 });
	const n8n = new N8nInstance({
		name: 'soak',
		env: { N8N_USE_WORKFLOW_PUBLICATION_SERVICE: 'false', EXECUTIONS_DATA_PRUNE: 'false' },
	});
	const agent = httpsAgent(2);
	try {
		ctx.say('  soak: starting n8n in legacy publication mode');
		await n8n.start();
		const credential = await createCredential(n8n, sim, 'Soak');
		const webhookId = randomUUID();
		const workflowId = await createWorkflow(n8n, triggerWorkflow(credential, webhookId, 'Soak'));
		const watch = watchSubscriptions(sim, webhookId);
		// Legacy mode: publish runs create once, no retry.
		addSubscriptionFaults(sim, 1);

		// Evenly spread; a restart due in a cycle whose registration failed moves to the next one.
		const restartAt = Array.from({ length: soakRestarts }, (_, index) =>
			Math.round(((index + 1) * soakCycles) / (soakRestarts + 1)),
		);
		const registered = { ok: 0, failed: 0, surfaced: 0, notWorking: 0, leftAfterUnpublish: 0 };
		const problems: string[] = [];
		const messages = new Set<string>();
		let restarts = 0;

		/** The one subscription, its key the one whose hash n8n stored, and a delivery with it starts the workflow. */
		const verifyRegistration = async (cycle: number, when: string) => {
			const subscriptions = watch.ours();
			if (subscriptions.length !== 1) {
				problems.push(`cycle ${cycle} ${when}: ${subscriptions.length} subscriptions`);
				return false;
			}
			const key =
				new URL(subscriptions[0].notificationUrl).searchParams.get(DELIVERY_KEY_PARAMETER) ?? '';
			const stored = await n8n.api<{ staticData?: Record<string, Record<string, unknown>> }>(
				'GET',
				`/workflows/${workflowId}`,
			);
			const nodeData = stored.body.staticData?.[`node:${TRIGGER_NAME}`] ?? {};
			const hashMatches =
				nodeData.deliveryKeyHash === createHash('sha256').update(key).digest('hex') &&
				nodeData.subscriptionId === subscriptions[0].id;
			const event = JSON.stringify({
				eventId: randomUUID(),
				eventType: 'invoice.issued',
				occurredAt: '2026-11-22T10:00:00Z',
				subscriptionId: subscriptions[0].id,
				data: { invoiceNumber: 'INV-0000001' },
			});
			const delivered = await post(
				agent,
				`${n8n.url}/webhook/${webhookId}/webhook?${DELIVERY_KEY_PARAMETER}=${key}`,
				event,
			);
			if (!hashMatches || delivered.status !== 200) {
				problems.push(
					`cycle ${cycle} ${when}: stored hash ${hashMatches ? 'matches' : 'differs'}, delivery ${delivered.status}`,
				);
				return false;
			}
			return true;
		};

		ctx.say(
			`  soak: ${soakCycles} cycles, ${soakRestarts} restarts, 10% of subscription calls failing`,
		);
		for (let cycle = 1; cycle <= soakCycles; cycle++) {
			const published = await n8n.api<{ message?: string }>(
				'POST',
				`/workflows/${workflowId}/publish`,
			);
			if (published.status === 200) {
				registered.ok += 1;
				if (!(await verifyRegistration(cycle, 'after publish'))) registered.notWorking += 1;
				if (restarts < restartAt.length && cycle >= restartAt[restarts]) {
					ctx.say(`  soak: restart ${restarts + 1} at cycle ${cycle}`);
					await n8n.restart();
					restarts += 1;
					// Legacy mode re-activates published workflows at start (checkExists, create when needed).
					const back = await waitFor(
						'the workflow active again after the restart',
						async () => {
							const subscriptions = watch.ours();
							if (subscriptions.length !== 1) return undefined;
							const key =
								new URL(subscriptions[0].notificationUrl).searchParams.get(
									DELIVERY_KEY_PARAMETER,
								) ?? '';
							const answer = await post(
								agent,
								`${n8n.url}/webhook/${webhookId}/webhook?${DELIVERY_KEY_PARAMETER}=${key}`,
								'{}',
							);
							return answer.status === 400 ? true : undefined; // the key was let in; the body was refused
						},
						120_000,
						500,
					).catch(() => false);
					if (!back || !(await verifyRegistration(cycle, 'after restart'))) {
						registered.notWorking += 1;
						problems.push(`cycle ${cycle}: not working after the restart`);
					}
				}
			} else {
				registered.failed += 1;
				const message = String(published.body?.message ?? published.text);
				ctx.errorMessages.push(message);
				messages.add(printable(message.slice(0, 100)));
				// n8n removes a failed publish's activation error again (remove() after the failed add()),
				// so /rest/active-workflows/error/{id} keeps only failures at startup: the 400 is the signal.
				const clear = published.status === 400 && CLEAR_REGISTRATION_FAILURE.test(message);
				if (clear) registered.surfaced += 1;
				else
					problems.push(
						`cycle ${cycle}: publish ${published.status} "${printable(message.slice(0, 120))}"`,
					);
				if (watch.ours().length !== 0)
					problems.push(
						`cycle ${cycle}: ${watch.ours().length} subscriptions after the failed publish`,
					);
			}
			const unpublished = await n8n.api('POST', `/workflows/${workflowId}/unpublish`);
			if (unpublished.status !== 200 && published.status === 200) {
				problems.push(
					`cycle ${cycle}: unpublish ${unpublished.status} ${printable(unpublished.text.slice(0, 120))}`,
				);
			}
			if (watch.ours().length !== 0) {
				registered.leftAfterUnpublish += 1;
				problems.push(`cycle ${cycle}: ${watch.ours().length} subscriptions after unpublish`);
			}
			if (cycle % 25 === 0)
				ctx.say(`  soak: cycle ${cycle}: ${registered.ok} registered, ${registered.failed} failed`);
		}
		const faults = faultSummary(sim);
		sim.faults.clear();
		const orphans = watch.ours().length;

		ctx.report.check(
			ITEM,
			`legacy mode: orphaned subscriptions after ${soakCycles} cycles and ${restarts} restarts`,
			orphans,
			'0',
			orphans === 0,
		);
		ctx.report.check(
			ITEM,
			'legacy mode: most subscriptions held at once by the workflow',
			watch.most,
			'1',
			watch.most === 1,
		);
		ctx.report.check(
			ITEM,
			'legacy mode: registrations that worked (one subscription, stored hash, a delivery runs)',
			`${registered.ok - registered.notWorking} / ${registered.ok}`,
			'all',
			registered.notWorking === 0,
		);
		ctx.report.check(
			ITEM,
			'legacy mode: faults injected / registrations that failed / surfaced clearly (publish answered 400 with the node’s message)',
			`${faults.injected} / ${registered.failed} / ${registered.surfaced}`,
			'> 0 / ≥ 1 / all',
			faults.injected > 0 && registered.failed >= 1 && registered.surfaced === registered.failed,
			messages.size ? `messages: ${[...messages].join(' | ')}` : undefined,
		);
		if (problems.length) {
			ctx.report.info(
				ITEM,
				'legacy mode: problems seen',
				problems.length,
				'—',
				problems.slice(0, 6).join(' | '),
			);
		}
		ctx.report.check(
			ITEM,
			'legacy mode: cycles leaving a subscription after unpublish',
			registered.leftAfterUnpublish,
			'0',
			registered.leftAfterUnpublish === 0,
		);
		ctx.report.info(ITEM, 'legacy mode: faults injected', faults.text);
	} finally {
		await agent.close();
		await n8n.dispose();
		await sim.close();
	}
}

export async function defaultModeCyclesCheck(ctx: RunContext) {
	const cycles = ctx.sizes.defaultModeCycles;
	const sim = await startTrackedSimulator({ invoices: 20, assets: 5 });
	const n8n = await ctx.mainN8n();
	try {
		const credential = await createCredential(n8n, sim, 'Publish cycles');
		const webhookId = randomUUID();
		const workflowId = await createWorkflow(
			n8n,
			triggerWorkflow(credential, webhookId, 'Publish cycles'),
		);
		const watch = watchSubscriptions(sim, webhookId);
		// Default mode: n8n tries a failed registration N8N_ACTIVATION_ATTEMPTS times.
		addSubscriptionFaults(sim, N8N_ACTIVATION_ATTEMPTS);
		const status = async () => await publicationStatus(n8n, workflowId);
		const outcome = { published: 0, failed: 0, surfaced: 0, quick: 0, wrongCycles: 0 };
		const problems: string[] = [];
		ctx.say(`  publish cycles (default mode): ${cycles}, every 4th unpublished at once`);
		for (let cycle = 1; cycle <= cycles; cycle++) {
			// Every cycle is judged on its own: what the end state cannot show (a second subscription
			// while published, an unpublish refused, one left behind for a while) fails the cycle.
			const wrong: string[] = [];
			const published = await n8n.api('POST', `/workflows/${workflowId}/publish`);
			if (published.status !== 200)
				throw new Error(`publish: ${published.status} ${published.text}`);
			if (cycle % 4 === 0) {
				outcome.quick += 1;
			} else {
				const settled = await waitFor(
					'the publication to settle',
					async () => {
						const state = await status();
						return ['published', 'failed'].includes(state.status) ? state : undefined;
					},
					120_000,
					250,
				);
				if (settled.status === 'published') {
					outcome.published += 1;
					const held = watch.ours().length;
					if (held !== 1) wrong.push(`${held} subscriptions while published`);
				} else {
					outcome.failed += 1;
					const message = settled.triggers.map((trigger) => trigger.errorMessage ?? '').join(' ');
					ctx.errorMessages.push(message);
					if (CLEAR_REGISTRATION_FAILURE.test(message)) outcome.surfaced += 1;
					else wrong.push(`failure not surfaced clearly: "${printable(message.slice(0, 120))}"`);
				}
			}
			const unpublished = await n8n.api('POST', `/workflows/${workflowId}/unpublish`);
			if (unpublished.status !== 200)
				wrong.push(`unpublish ${unpublished.status} ${printable(unpublished.text.slice(0, 120))}`);
			// A registration still retrying in the background must not leave a subscription behind.
			const cleared = await waitFor(
				'no subscription',
				() => watch.ours().length === 0,
				40_000,
				250,
			).then(
				() => true,
				() => false,
			);
			if (!cleared) wrong.push(`${watch.ours().length} subscriptions 40 s after unpublish`);
			if (wrong.length > 0) {
				outcome.wrongCycles += 1;
				problems.push(`cycle ${cycle}: ${wrong.join(', ')}`);
			}
		}
		// Orphans are counted once nothing of the workflow runs in n8n any more: a settled
		// unpublish means the registrations it abandoned (still retrying) have ended too, unless
		// n8n gave up waiting for them, which it logs.
		const final = await settledPublication(n8n, workflowId);
		const abandoned = ABANDONED_OPERATIONS.test(n8n.log());
		const faults = faultSummary(sim);
		sim.faults.clear();
		const orphans = watch.ours().length;
		ctx.report.check(
			ITEM,
			'default mode: after the last unpublish, publication settled / n8n still running abandoned trigger work',
			`${final.status} / ${abandoned ? 'yes' : 'no'}`,
			'not_published / no',
			final.status === 'not_published' && !abandoned,
		);
		ctx.report.check(
			ITEM,
			`default mode: orphaned subscriptions after ${cycles} cycles (${outcome.quick} unpublished at once)`,
			orphans,
			'0',
			orphans === 0,
		);
		ctx.report.check(
			ITEM,
			'default mode: cycles gone wrong (not exactly one subscription while published, a failure not surfaced clearly, unpublish not answered 200, a subscription still there 40 s after unpublish)',
			outcome.wrongCycles,
			'0',
			outcome.wrongCycles === 0,
			problems.length ? problems.slice(0, 4).join(' | ') : undefined,
		);
		ctx.report.check(
			ITEM,
			'default mode: most subscriptions held at once by the workflow',
			watch.most,
			'1',
			watch.most === 1,
		);
		ctx.report.check(
			ITEM,
			'default mode: faults injected / registrations that failed after n8n’s retries / surfaced in publication-status',
			`${faults.injected} / ${outcome.failed} / ${outcome.surfaced}`,
			'> 0 / ≥ 1 / all',
			faults.injected > 0 && outcome.failed >= 1 && outcome.failed === outcome.surfaced,
		);
		ctx.report.info(ITEM, 'default mode: faults injected', faults.text);
	} finally {
		await sim.close();
	}
}
