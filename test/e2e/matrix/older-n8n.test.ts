/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/**
 * The reduced end-to-end scenario on another n8n release of the matrix (test/n8n/install.ts):
 * n8n 1.123.x on Node 22 by default, or the release N8N_MATRIX_VERSION names. The packed package
 * is installed into the nodes folder; credential test, an action run, activation → exactly one
 * subscription, a genuine delivery → one execution, a forged one → 401 and none, deactivation →
 * no subscription, a restart → deliveries work again, an expired token → one renewal, a 429 →
 * the retry after its Retry-After. The release's own words and endpoints
 * (activate/publish, owner setup, credential test) live in test/n8n/instance.ts. Each step's
 * result goes to `<cache>/matrix-results/<version>.json` for docs/compatibility.md.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { DELIVERY_KEY_PARAMETER } from '../../../nodes/InvoicingAssets/transport/contract';
import {
	credentialData,
	issueInvoiceBillingAnAsset as issueAnInvoice,
	deliverToHook,
	subscriptionsOfHook,
} from '../../harness/test-data';
import { createCredential } from '../../n8n/credentials';
import { getExecution, listExecutions, waitFor, waitForEvent } from '../../n8n/executions';
import { cacheRoot, releaseFromEnv, N8N_1X } from '../../n8n/install';
import { N8nInstance } from '../../n8n/instance';
import { disposePackedPackage } from '../../n8n/package';
import { startSimulator, type Simulator } from '../../simulator';
import {
	ACTION_TYPE,
	CREDENTIAL_TYPE,
	NODE_NAMES,
	TRIGGER_TYPE,
	invoiceToAssetWorkflow,
} from '../workflows';

jest.setTimeout(10 * 60_000);

const release = process.env.N8N_MATRIX_VERSION ? releaseFromEnv() : N8N_1X;
const label = `n8n ${release.version} on Node ${release.nodeMajor}`;

let sim: Simulator;
let n8n: N8nInstance;
let credential: { id: string; name: string };
let workflowId: string;
const webhookId = randomUUID();
const results: Array<{ step: string; passed: boolean }> = [];
const started = Date.now();

const ourSubscriptions = () => subscriptionsOfHook(sim, webhookId);
const issueInvoiceBillingAnAsset = () => issueAnInvoice(sim);

const deliver = async (query: string, body: unknown) =>
	await deliverToHook(n8n.url, webhookId, query, body);

/** The status, with the answer's text when it is not 200, so that a failure shows n8n's reason. */
function answered(answer: { status: number; text: string }): string {
	return answer.status === 200 ? '200' : `${answer.status} ${answer.text.slice(0, 500)}`;
}

/** Runs a step and records whether it passed, for the compatibility table. */
function step(name: string, body: () => Promise<void>) {
	test(`${label}: ${name}`, async () => {
		const result = { step: name, passed: false };
		results.push(result);
		await body();
		result.passed = true;
	});
}

beforeAll(async () => {
	sim = await startSimulator({
		invoices: 20,
		assets: 10,
		delivery: { retrySchedule: [300, 1000, 2000] },
	});
	n8n = new N8nInstance({ name: `matrix-${release.version}`, release });
	await n8n.start();
});

afterAll(async () => {
	await n8n?.dispose();
	await sim?.close();
	disposePackedPackage();
	const folder = join(cacheRoot(), 'matrix-results');
	mkdirSync(folder, { recursive: true });
	writeFileSync(
		join(folder, `${release.version}.json`),
		`${JSON.stringify({ release, finishedAt: new Date().toISOString(), seconds: Math.round((Date.now() - started) / 1000), results }, null, 2)}\n`,
	);
});

step(
	'the packed package loads from the nodes folder: both nodes and the credential type',
	async () => {
		const nodes = await n8n.signedIn<Array<{ name: string }>>('GET', '/types/nodes.json');
		expect(nodes.status).toBe(200);
		expect(nodes.body.map((node) => node.name)).toEqual(
			expect.arrayContaining([ACTION_TYPE, TRIGGER_TYPE]),
		);
		const credentials = await n8n.signedIn<Array<{ name: string }>>(
			'GET',
			'/types/credentials.json',
		);
		expect(credentials.body.map((type) => type.name)).toContain(CREDENTIAL_TYPE);
	},
);

step('the credential test passes', async () => {
	credential = await createCredential(n8n, sim, 'Invoicing & Assets account', {
		data: release.credentialDataExtras,
	});
	const tokensBefore = sim.log.tokensIssued();
	const tested = await n8n.testCredential({
		...credential,
		type: CREDENTIAL_TYPE,
		data: { ...credentialData(sim), ...release.credentialDataExtras },
	});
	expect(tested.body).toMatchObject({ status: 'OK' });
	expect(sim.log.tokensIssued() - tokensBefore).toBe(1);
});

step('activation registers exactly one https subscription', async () => {
	const created = await n8n.api<{ id: string }>(
		'POST',
		'/workflows',
		invoiceToAssetWorkflow(credential, webhookId),
	);
	expect(answered(created)).toBe('200');
	workflowId = created.body.id;
	expect(answered(await n8n.activate(workflowId))).toBe('200');
	const [subscription] = await waitFor('the subscription', () =>
		ourSubscriptions().length === 1 ? ourSubscriptions() : undefined,
	);
	expect(new URL(subscription.notificationUrl).protocol).toBe('https:');
	expect(subscription.eventTypes).toEqual(['invoice.issued']);
	expect(sim.log.count('subscriptions.create', { status: 201 })).toBe(1);
});

step(
	'a genuine delivery starts one execution, whose action nodes fetch the invoice and its asset',
	async () => {
		const before = await listExecutions(n8n, workflowId);
		const { invoice, event } = issueInvoiceBillingAnAsset();
		const since = await waitForEvent(n8n, workflowId, NODE_NAMES.trigger, event.eventId, {
			after: before,
		});
		const runs = since.get(event.eventId) ?? [];
		expect(runs.map((execution) => execution.status)).toEqual(['success']);
		const full = await getExecution(n8n, runs[0].id);
		const runData = full.data?.resultData.runData ?? {};
		expect(runData[NODE_NAMES.invoice][0].data?.main[0][0].json).toMatchObject({
			invoiceNumber: invoice.invoiceNumber,
		});
		expect(runData[NODE_NAMES.asset][0].data?.main[0][0].json).toMatchObject({
			assetId: invoice.lines[0].assetId,
		});
	},
);

step('a forged delivery gets 401 and starts nothing', async () => {
	const before = await listExecutions(n8n, workflowId);
	const forged = {
		eventId: randomUUID(),
		eventType: 'invoice.issued',
		occurredAt: '2026-11-22T10:00:00Z',
		subscriptionId: ourSubscriptions()[0].id,
		data: { invoiceNumber: sim.data.invoices()[0].invoiceNumber },
	};
	const forgedAnswer = await deliver(`?${DELIVERY_KEY_PARAMETER}=${'A'.repeat(43)}`, forged);
	expect(forgedAnswer.status).toBe(401);
	// A genuine event after it: once that has run, the forged one has been handled.
	const { event: sentinel } = issueInvoiceBillingAnAsset();
	const since = await waitForEvent(n8n, workflowId, NODE_NAMES.trigger, sentinel.eventId, {
		after: before,
	});
	expect([...since.keys()]).toEqual([sentinel.eventId]);
});

step('deactivation deletes the subscription', async () => {
	expect((await n8n.deactivate(workflowId)).status).toBe(200);
	await waitFor('no subscription', () => ourSubscriptions().length === 0);
	expect(sim.log.count('subscriptions.delete', { status: 204 })).toBe(1);
});

step('after a restart of the active workflow, deliveries work again', async () => {
	expect((await n8n.activate(workflowId)).status).toBe(200);
	await waitFor('the subscription', () => (ourSubscriptions().length === 1 ? true : undefined));
	await n8n.restart();
	await waitFor('one subscription after the restart', () =>
		ourSubscriptions().length === 1 ? true : undefined,
	);
	const before = await listExecutions(n8n, workflowId);
	const { event } = issueInvoiceBillingAnAsset();
	const since = await waitForEvent(n8n, workflowId, NODE_NAMES.trigger, event.eventId, {
		after: before,
	});
	expect(since.get(event.eventId)?.map((execution) => execution.status)).toEqual(['success']);
	expect(ourSubscriptions()).toHaveLength(1);
});

/** Issues an invoice and waits for its execution to succeed. */
async function issuedInvoiceRuns() {
	const before = await listExecutions(n8n, workflowId);
	const { event } = issueInvoiceBillingAnAsset();
	const since = await waitForEvent(n8n, workflowId, NODE_NAMES.trigger, event.eventId, {
		after: before,
	});
	expect(since.get(event.eventId)?.map((execution) => execution.status)).toEqual(['success']);
}

step(
	'an expired token is renewed once: after 61 simulated minutes the next execution succeeds with one new token',
	async () => {
		const tokensBefore = sim.log.tokensIssued();
		const refusedBefore = sim.log.count('invoices.get', { status: 401 });
		sim.clock.advance(61 * 60_000);
		await issuedInvoiceRuns();
		expect(sim.log.tokensIssued() - tokensBefore).toBe(1);
		expect(sim.log.count('invoices.get', { status: 401 }) - refusedBefore).toBe(1);
	},
);

step(
	'the service’s Retry-After reaches the node: a 429 is retried after the wait it asked for',
	async () => {
		const answeredBefore = sim.log.entries({ route: 'invoices.get' }).length;
		sim.faults.add({ route: 'invoices.get', status: 429, retryAfter: 2, times: 1 });
		await issuedInvoiceRuns();
		const [limited, retried] = sim.log.entries({ route: 'invoices.get' }).slice(answeredBefore);
		expect([limited.status, retried.status]).toEqual([429, 200]);
		expect(
			retried.receivedAtMs - (limited.receivedAtMs + limited.durationMs),
		).toBeGreaterThanOrEqual(2000);
	},
);
