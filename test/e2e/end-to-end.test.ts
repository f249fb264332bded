/**
 * The package in a real n8n 2.41.1 over HTTPS: loaded from its npm tarball, credential tested,
 * a workflow published and run on delivered events, then cleaned up. Assertions are made at the
 * simulator (subscriptions, tokens) and through n8n's public API (executions). The tests run in
 * the order written, each on what the ones before left: the credential, the published workflow.
 */
import { randomUUID } from 'node:crypto';

import { DELIVERY_KEY_PARAMETER } from '../../nodes/InvoicingAssets/transport/contract';
import { expectNoSecret } from '../harness/secrets';
import {
	issueInvoiceBillingAnAsset as issueAnInvoice,
	subscriptionsOfHook,
} from '../harness/test-data';
import {
	eventIdOf,
	getExecution,
	hasEnded,
	listExecutions,
	nodeOutput,
	waitFor,
	waitForEvent,
	waitForExecutions,
} from '../n8n/executions';
import { createCredential } from '../n8n/credentials';
import { N8nInstance } from '../n8n/instance';
import { disposePackedPackage } from '../n8n/package';
import { watchSubscriptions } from '../n8n/subscriptions';
import { startSimulator, type Simulator } from '../simulator';
import {
	ACTION_TYPE,
	CREDENTIAL_TYPE,
	NODE_NAMES,
	TRIGGER_TYPE,
	invoiceToAssetWorkflow,
} from './workflows';

jest.setTimeout(10 * 60_000);

const MINUTE = 60_000;

let sim: Simulator;
let n8n: N8nInstance;
let plainN8n: N8nInstance | undefined;
let credential: { id: string; name: string };
let workflowId: string;
const webhookId = randomUUID();

const ourSubscriptions = () => subscriptionsOfHook(sim, webhookId);
const issueInvoiceBillingAnAsset = () => issueAnInvoice(sim);

/** Every secret the simulator issued or received (client secrets, tokens, delivery keys), with its kind. */
function secrets(...more: Array<[string, string]>): Map<string, string> {
	return new Map<string, string>([...sim.secrets(), ...more]);
}

function deliveryKey(): string {
	const [subscription] = ourSubscriptions();
	return new URL(subscription.notificationUrl).searchParams.get(DELIVERY_KEY_PARAMETER) ?? '';
}

beforeAll(async () => {
	sim = await startSimulator({
		invoices: 40,
		assets: 20,
		delivery: { retrySchedule: [300, 1000, 2000] },
	});
	n8n = new N8nInstance({ name: 'e2e' });
	await n8n.start();
});

afterAll(async () => {
	await plainN8n?.dispose();
	await n8n?.dispose();
	await sim?.close();
	disposePackedPackage();
});

test('n8n loads the package: both node types, the tool variant and the credential type are listed', async () => {
	const nodes = await n8n.signedIn<Array<{ name: string }>>('GET', '/types/nodes.json');
	expect(nodes.status).toBe(200);
	const names = nodes.body.map((node) => node.name);
	expect(names).toEqual(
		expect.arrayContaining([
			ACTION_TYPE,
			TRIGGER_TYPE,
			`${ACTION_TYPE.replace(/invoicingAssets$/, 'invoicingAssetsTool')}`,
		]),
	);

	const credentials = await n8n.signedIn<Array<{ name: string }>>('GET', '/types/credentials.json');
	expect(credentials.body.map((type) => type.name)).toContain(CREDENTIAL_TYPE);
});

test('the credential created through the public API passes its test; a wrong secret fails clearly', async () => {
	credential = await createCredential(n8n, sim, 'Invoicing & Assets account');
	const tested = await n8n.api<{ status: string; message: string }>(
		'POST',
		`/credentials/${credential.id}/test`,
	);
	expect(tested.body).toMatchObject({ status: 'OK' });

	const wrongSecret = `${sim.defaultClient.clientSecret.slice(0, -4)}xxxx`;
	const wrong = await createCredential(n8n, sim, 'Wrong secret', {
		data: { clientSecret: wrongSecret },
	});
	const failed = await n8n.api<{ status: string; message: string }>(
		'POST',
		`/credentials/${wrong.id}/test`,
	);
	expect(failed.body.status).toBe('Error');
	expect(failed.body.message).toMatch(/client ID or secret/i);
	expectNoSecret(
		failed.text,
		secrets([wrongSecret, 'wrong client secret']),
		"the failed credential test's answer",
	);
});

test('the published workflow registers exactly one https subscription carrying apiKey', async () => {
	const created = await n8n.api<{ id: string }>(
		'POST',
		'/workflows',
		invoiceToAssetWorkflow(credential, webhookId),
	);
	expect(created.status).toBe(200);
	workflowId = created.body.id;

	const published = await n8n.api('POST', `/workflows/${workflowId}/publish`);
	expect(published.status).toBe(200);
	const [subscription] = await waitFor('the subscription', () =>
		ourSubscriptions().length === 1 ? ourSubscriptions() : undefined,
	);
	expect(ourSubscriptions()).toHaveLength(1);

	const url = new URL(subscription.notificationUrl);
	expect(url.protocol).toBe('https:');
	expect(url.pathname).toBe(`/webhook/${webhookId}/webhook`);
	expect(url.searchParams.get(DELIVERY_KEY_PARAMETER)?.length).toBeGreaterThanOrEqual(32);
	expect(subscription.eventTypes).toEqual(['invoice.issued']);
});

test('an issued invoice runs the workflow, which fetches the invoice and its asset; the key is nowhere in the execution', async () => {
	const { invoice } = issueInvoiceBillingAnAsset();
	const [first] = await waitForExecutions(n8n, workflowId, 1);
	expect(first.status).toBe('success');

	const full = await getExecution(n8n, first.id);
	const runData = full.data?.resultData.runData ?? {};
	const fetched = runData[NODE_NAMES.invoice][0].data?.main[0][0].json;
	const asset = runData[NODE_NAMES.asset][0].data?.main[0][0].json;
	expect(fetched).toMatchObject({
		invoiceNumber: invoice.invoiceNumber,
		customerNumber: invoice.customerNumber,
	});
	expect(asset).toMatchObject({ assetId: invoice.lines[0].assetId });
	expectNoSecret(full, secrets([deliveryKey(), 'delivery key']), 'the execution data');
});

test('after 61 simulated minutes the next event still succeeds with exactly one new token', async () => {
	const before = await listExecutions(n8n, workflowId);
	const tokensBefore = sim.log.tokensIssued();
	sim.clock.advance(61 * MINUTE);
	const { event } = issueInvoiceBillingAnAsset();

	const since = await waitForEvent(n8n, workflowId, NODE_NAMES.trigger, event.eventId, {
		after: before,
	});
	expect(since.get(event.eventId)?.map((execution) => execution.status)).toEqual(['success']);
	expect(sim.log.tokensIssued() - tokensBefore).toBe(1);
});

test('unpublish leaves no subscription; 20 publish/unpublish cycles never hold more than one', async () => {
	expect((await n8n.api('POST', `/workflows/${workflowId}/unpublish`)).status).toBe(200);
	await waitFor('no subscription', () => ourSubscriptions().length === 0);

	// Counted at every create, so that a second subscription held only for a moment is seen.
	const watch = watchSubscriptions(sim, webhookId);
	try {
		for (let cycle = 0; cycle < 20; cycle++) {
			expect((await n8n.api('POST', `/workflows/${workflowId}/publish`)).status).toBe(200);
			await waitFor(`subscription of cycle ${cycle + 1}`, () => ourSubscriptions().length === 1);
			expect((await n8n.api('POST', `/workflows/${workflowId}/unpublish`)).status).toBe(200);
			await waitFor(
				`no subscription after cycle ${cycle + 1}`,
				() => ourSubscriptions().length === 0,
			);
		}
	} finally {
		watch.stop();
	}
	// One create per cycle: no fault is injected here, so nothing is tried twice.
	expect(watch.created).toBe(20);
	expect(watch.most).toBe(1);
	expect(ourSubscriptions()).toHaveLength(0);
});

test('after an out-of-band deletion, a restart in legacy publication mode re-creates the subscription', async () => {
	expect((await n8n.api('POST', `/workflows/${workflowId}/publish`)).status).toBe(200);
	const [original] = await waitFor('the subscription', () =>
		ourSubscriptions().length === 1 ? ourSubscriptions() : undefined,
	);
	await n8n.stop();
	expect(sim.subscriptions.delete(original.id)).toBe(true);

	n8n.setEnv({ N8N_USE_WORKFLOW_PUBLICATION_SERVICE: 'false' });
	await n8n.start();
	const [recreated] = await waitFor('the re-created subscription', () =>
		ourSubscriptions().length === 1 ? ourSubscriptions() : undefined,
	);
	expect(recreated.id).not.toBe(original.id);

	const before = (await listExecutions(n8n, workflowId)).length;
	issueInvoiceBillingAnAsset();
	const list = await waitForExecutions(n8n, workflowId, before + 1);
	expect(list.filter((entry) => entry.status === 'success')).toHaveLength(before + 1);
});

test('an n8n with a plain-http webhook URL registers nothing and explains the HTTPS requirement', async () => {
	plainN8n = new N8nInstance({ name: 'plain-http', https: false });
	await plainN8n.start();
	const plainCredential = await createCredential(plainN8n, sim, 'Invoicing & Assets account');
	const plainWebhookId = randomUUID();
	const created = await plainN8n.api<{ id: string }>(
		'POST',
		'/workflows',
		invoiceToAssetWorkflow(plainCredential, plainWebhookId),
	);
	const subscriptionsBefore = sim.subscriptions.list().length;
	const createsBefore = sim.log.count('subscriptions.create');

	expect((await plainN8n.api('POST', `/workflows/${created.body.id}/publish`)).status).toBe(200);
	const status = await waitFor(
		'the publication error',
		async () => {
			const answer = await plainN8n?.rest<{
				data: { status: string; triggers: Array<{ errorMessage?: string }> };
			}>('GET', `/workflows/${created.body.id}/publication-status`);
			return answer?.body.data.status === 'failed' ? answer.body.data : undefined;
		},
		90_000,
	);

	const message = status.triggers.map((trigger) => trigger.errorMessage ?? '').join(' ');
	// The fix itself reaches the user: n8n shows only the message of a failed publication.
	expect(message).toContain(
		'The production webhook URL must start with https://: set N8N_WEBHOOK_URL to n8n’s public https address',
	);
	expect(plainN8n.log()).toContain('webhook URL must start with https://');
	expect(sim.subscriptions.list()).toHaveLength(subscriptionsBefore);
	expect(sim.log.count('subscriptions.create')).toBe(createsBefore);
	expect(
		sim.subscriptions
			.list()
			.some((subscription) => subscription.notificationUrl.includes(plainWebhookId)),
	).toBe(false);
});

test('"Listen for test event" (the editor\'s Execute step) registers a /webhook-test/ subscription, runs once on an event, then deletes it; the published one stays', async () => {
	expect(ourSubscriptions()).toHaveLength(1);
	const [production] = ourSubscriptions();
	const isTestUrl = (url: string) => new URL(url).pathname === `/webhook-test/${webhookId}/webhook`;

	// What the editor sends when the trigger's "Execute step" is clicked.
	const run = await n8n.rest<{ data: { waitingForWebhook?: boolean } }>(
		'POST',
		`/workflows/${workflowId}/run`,
		{ triggerToStartFrom: { name: NODE_NAMES.trigger } },
	);
	try {
		expect(run.status).toBe(200);
		expect(run.body.data.waitingForWebhook).toBe(true);
		const listening = await waitFor('the test subscription', () =>
			ourSubscriptions().find((subscription) => isTestUrl(subscription.notificationUrl)),
		);
		expect(new URL(listening.notificationUrl).origin).toBe(n8n.url);
		expect(
			new URL(listening.notificationUrl).searchParams.get(DELIVERY_KEY_PARAMETER)?.length,
		).toBeGreaterThanOrEqual(32);
		expect(listening.eventTypes).toEqual(['invoice.issued']);
		expect(ourSubscriptions().map((subscription) => subscription.id)).toEqual([
			production.id,
			listening.id,
		]);

		// One event, delivered to both: the test execution (manual) and the published workflow's.
		const { invoice, event } = issueInvoiceBillingAnAsset();
		const runs = await waitFor(
			'the test execution and the production one',
			async () => {
				const list = (await listExecutions(n8n, workflowId, true)).filter(
					(execution) => eventIdOf(execution, NODE_NAMES.trigger) === event.eventId,
				);
				return list.length >= 2 && list.every(hasEnded) ? list : undefined;
			},
			120_000,
			500,
		);
		expect(runs.map((execution) => execution.mode).sort()).toEqual(['manual', 'webhook']);
		const manual = runs.find((execution) => execution.mode === 'manual');
		expect(manual?.status).toBe('success');
		expect(nodeOutput(manual ?? runs[0], NODE_NAMES.invoice)[0]?.json).toMatchObject({
			invoiceNumber: invoice.invoiceNumber,
		});
		expectNoSecret(manual, secrets(), 'the test execution');

		// Listening ends with that event: n8n deletes the test subscription, and only that one.
		await waitFor('the test subscription deleted', () =>
			ourSubscriptions().every((subscription) => subscription.id !== listening.id),
		);
		expect(
			sim.log
				.entries({ route: 'subscriptions.delete' })
				.filter((entry) => entry.params.id === listening.id)
				.map((entry) => entry.status),
		).toEqual([204]);
		expect(ourSubscriptions().map((subscription) => subscription.id)).toEqual([production.id]);
	} finally {
		// Stops listening if a step above failed (n8n's "Stop listening"); nothing to stop otherwise.
		await n8n.rest('DELETE', `/test-webhook/${workflowId}`);
	}
});
