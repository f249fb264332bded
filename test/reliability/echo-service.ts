/* eslint-disable @n8n/community-nodes/no-restricted-imports */
/**
 * Secret hygiene's service that quotes every request back in its errors (issue 39, item 1): the
 * simulator with echoRequests (test/simulator/echo.ts), a client secret and a Delivery API Key of
 * characters every encoding changes, and each path a service's words take into n8n, run in process
 * with n8n-core (a few seconds): the action node failing and with Continue On Fail, the webhook
 * trigger's publish, Subscription → Create, a refused token (401, 403, after a renewal), a poll.
 * What they left goes to `<own folder>/echo-service/`: every error, item and execution as n8n-core
 * keeps it, and n8n's log; the scan of hygiene.ts looks there for every form of each secret.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { IDataObject } from 'n8n-workflow';

import { captureN8nLog } from '../harness/n8n-log';
import { PollingWorkflow } from '../harness/poller';
import { textOf } from '../harness/secrets';
import { credentialFor, startTestbed, type Testbed } from '../harness/testbed';
import { TriggerHost } from '../harness/webhooks';
import type { FaultRule } from '../simulator';
import { trackTestbed, type RunContext } from './support';

const ITEM = '7 secrets';

/** The folder under the run's own folder that the scan reads as this check's place. */
export const ECHO_SERVICE_DIR = 'echo-service';

/** What the service's quote starts with: a path whose text holds it shows the service's words. */
const ECHOED = 'The request was: ';

/**
 * A secret of characters that the URL, form and JSON forms each write otherwise (no tab or
 * newline: the simulators' secret records are line-based).
 */
function oddCharacters(prefix: string): string {
	return `${prefix}~ +/=&"'<>\\%é-${randomBytes(6).toString('hex')}`;
}

interface PathRun {
	path: string;
	/** Everything the path left: its error, items, execution. */
	left: unknown;
}

const getInvoice = (testbed: Testbed): IDataObject => ({
	resource: 'invoice',
	operation: 'get',
	invoiceNumber: {
		__rl: true,
		mode: 'number',
		value: testbed.sim.data.invoices()[0].invoiceNumber,
	},
});

/** Each path a service's error takes into n8n, with the faults that make the service answer one. */
async function runPaths(testbed: Testbed, deliveryKey: string): Promise<PathRun[]> {
	const { sim, harness } = testbed;
	const runs: PathRun[] = [];
	const record = async (path: string, faults: FaultRule[], run: () => Promise<unknown>) => {
		for (const fault of faults) sim.faults.add(fault);
		try {
			runs.push({ path, left: await run() });
		} finally {
			sim.faults.clear();
		}
	};
	const fresh = () => harness.addCredential(credentialFor(sim));
	const withToken = async () => {
		const credential = fresh();
		await harness.runNode({ parameters: getInvoice(testbed), credential });
		return credential;
	};
	const runNode = async (parameters: IDataObject, credential = fresh(), continueOnFail = false) => {
		const result = await harness.runNode({ parameters, credential, continueOnFail });
		return { error: result.error, items: result.items, execution: result.run };
	};
	const publish = async () => {
		const host = await TriggerHost.start({
			harness,
			credential: fresh(),
			caDir: sim.caDir,
			parameters: { events: ['*'] },
		});
		try {
			const error = await host.publish().then(
				() => undefined,
				(failure: Error) => failure,
			);
			return { error, hookErrors: host.hookCalls.map((call) => call.error) };
		} finally {
			await host.close();
		}
	};
	const token400: FaultRule = { route: 'token', status: 400, body: { error: 'invalid_request' } };

	await record('action node, identity service 400', [token400], async () =>
		runNode(getInvoice(testbed)),
	);
	// The token request is retried (asking twice is harmless): each attempt fails, at once.
	await record(
		'action node with Continue On Fail, identity service 500',
		[{ route: 'token', status: 500, retryAfter: 0 }],
		async () => runNode(getInvoice(testbed), fresh(), true),
	);
	await record('webhook trigger publish, identity service 400', [token400], publish);
	await record(
		'webhook trigger publish, Data Service 400 on create',
		[{ route: 'subscriptions.create', status: 400 }],
		publish,
	);
	await record(
		'Subscription → Create with a Delivery API Key, Data Service 422',
		[{ route: 'subscriptions.create', status: 422 }],
		async () =>
			runNode({
				resource: 'subscription',
				operation: 'create',
				notificationUrl: 'https://n8n.example.com/webhook/invoices',
				eventTypes: ['*'],
				additionalFields: { deliveryKey },
			}),
	);
	const inUse = await withToken();
	await record(
		'action node, Data Service 403',
		[{ route: 'invoices.get', status: 403 }],
		async () => runNode(getInvoice(testbed), inUse),
	);
	const renewed = await withToken();
	await record(
		'action node, Data Service 401 before and after a renewal',
		[{ route: 'invoices.get', status: 401 }],
		async () => runNode(getInvoice(testbed), renewed),
	);
	const polling = new PollingWorkflow(harness, fresh(), { events: ['*'] });
	await polling.activate();
	await record(
		'Polling Trigger poll, Data Service 403',
		[{ route: 'invoices.list', status: 403 }],
		async () => await polling.poll(),
	);
	return runs;
}

/**
 * `value` as JSON without the node parameters n8n's errors carry (in n8n's log too): they hold
 * what the user entered (Subscription → Create's Delivery API Key), not what a service sent.
 */
function withoutNodeParameters(value: unknown): string {
	return JSON.stringify(
		JSON.parse(textOf(value) || 'null', (key, entry: unknown) =>
			key === 'parameters' ? undefined : entry,
		),
	);
}

/**
 * Runs every path against the echoing service and keeps what they left for the scan. Checks that
 * each path's error holds the service's quote (its words reached n8n, so the scan means something).
 */
export async function echoingServiceCheck(ctx: RunContext) {
	const clientSecret = oddCharacters('Echo-client-secret');
	const deliveryKey = oddCharacters('Echo-delivery-key');
	const log = captureN8nLog();
	const testbed = trackTestbed(
		await startTestbed({
			invoices: 20,
			assets: 10,
			echoRequests: true,
			defaultClient: { clientSecret },
		}),
	);
	let runs: PathRun[];
	try {
		runs = await runPaths(testbed, deliveryKey);
	} finally {
		log.stop();
		await testbed.close();
	}

	const dir = join(ctx.ownDir, ECHO_SERVICE_DIR);
	mkdirSync(dir, { recursive: true });
	writeFileSync(join(dir, 'runs.json'), withoutNodeParameters(runs));
	writeFileSync(join(dir, 'n8n-core-log.jsonl'), log.entries.map(withoutNodeParameters).join('\n'));
	const quoted = runs.filter((run) => textOf(run.left).includes(ECHOED));
	ctx.report.check(
		ITEM,
		'paths whose error quotes the echoing service (each scanned for every form of each secret)',
		`${quoted.length} / ${runs.length}`,
		'all',
		quoted.length === runs.length,
		quoted.length < runs.length
			? `without the quote: ${runs
					.filter((run) => !quoted.includes(run))
					.map((run) => run.path)
					.join('; ')}`
			: undefined,
	);
}
