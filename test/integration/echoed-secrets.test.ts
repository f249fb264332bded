/**
 * Issue 39, item 1: no secret leaves n8n when a service quotes it back. The simulator's identity
 * service and Data Service quote every request in their error answers (echoRequests: the URL, the
 * headers, the body; as sent, JSON-escaped and URL-encoded), and each path a service's text takes
 * into n8n is checked for every form of each secret (quotedForms): the action node's error, the
 * Continue On Fail item, the trigger's activation error, what n8n stores with a failed execution,
 * and n8n's log.
 */
import type { INodeCredentialsDetails } from 'n8n-workflow';

import { useN8nLog } from '../harness/n8n-log';
import { POLLING_NODE_NAME, PollingWorkflow } from '../harness/poller';
import { expectNoSecretInAnyForm, textOf } from '../harness/secrets';
import { credentialFor, startTestbed, type Testbed } from '../harness/testbed';
import type { TriggerHost } from '../harness/webhooks';
import type { NodeRun } from '../harness/workflow';
import { startHost } from './trigger/helpers';

/** A client secret with every character a quoting service writes otherwise (the identity portal's have `~`). */
const CLIENT_SECRET = 'Cs8Q~echo+secret/with=odd&chars "q" \\ é';
/** A Delivery API Key of Subscription → Create, likewise. */
const DELIVERY_KEY = 'Dk~key+with/odd=chars&amp';

/** What a service's echo starts with in the node's texts: it was quoted, so the check means something. */
const ECHOED = 'The request was: ';
const REDACTED = '__redacted__';

let testbed: Testbed;
const n8nLog = useN8nLog();

beforeAll(async () => {
	testbed = await startTestbed({
		invoices: 10,
		assets: 5,
		echoRequests: true,
		defaultClient: { clientSecret: CLIENT_SECRET },
	});
});

afterAll(async () => {
	await testbed.close();
});

beforeEach(() => {
	testbed.sim.faults.clear();
	for (const subscription of testbed.sim.subscriptions.list()) {
		testbed.sim.subscriptions.delete(subscription.id);
	}
});

/** Every secret of the test run, by value: what the simulator made, issued and recorded, and the test's own. */
function secrets(): Map<string, string> {
	const all = new Map<string, string>([
		[CLIENT_SECRET, 'client secret'],
		[DELIVERY_KEY, 'delivery key'],
	]);
	for (const [value, kind] of testbed.sim.secrets()) all.set(value, kind);
	return all;
}

/** A credential with no token yet, so that the run asks the identity service first. */
function freshCredential(): INodeCredentialsDetails {
	return testbed.harness.addCredential(credentialFor(testbed.sim));
}

/** The access token a credential holds now (stored bound to its fields: `<fingerprint>.<token>`). */
function tokenIn(credential: INodeCredentialsDetails): string {
	const stored = String(testbed.harness.credentials.stored(credential.id ?? '').accessToken ?? '');
	return stored.slice(stored.indexOf('.') + 1);
}

const getInvoice = (number = testbed.sim.data.invoices()[0].invoiceNumber) => ({
	resource: 'invoice',
	operation: 'get',
	invoiceNumber: { __rl: true, mode: 'number', value: number },
});

/**
 * `value` as JSON without the node parameters that n8n's errors carry: they hold what the user
 * entered (Subscription → Create's Delivery API Key), not what a service sent.
 */
function withoutParameters(value: unknown): unknown {
	return JSON.parse(textOf(value) || 'null', (key, entry: unknown) =>
		key === 'parameters' ? undefined : entry,
	);
}

/** No form of any secret in the places named, nor in what n8n logged during the test. */
function expectNoSecretIn(places: Record<string, unknown>) {
	const known = secrets();
	for (const [place, value] of Object.entries(places)) {
		expectNoSecretInAnyForm(value, known, place);
	}
	expectNoSecretInAnyForm(withoutParameters(n8nLog.entriesOfThisTest()), known, 'n8n’s log');
}

/** The failed run's places: the node's error, its items, and all n8n stores with the execution. */
function runPlaces(result: NodeRun) {
	return {
		'the node’s error': withoutParameters(result.error),
		'the node’s items': result.items,
		'the stored execution (its error and every node’s run data)': withoutParameters(result.run),
	};
}

describe('the client secret, quoted by the identity service', () => {
	test('400 invalid_request with the form in error_description: the action node’s error, the stored execution and n8n’s log', async () => {
		testbed.sim.faults.add({
			route: 'token',
			status: 400,
			body: { error: 'invalid_request', error_description: 'The form was not understood.' },
			times: 1,
		});
		const result = await testbed.harness.runNode({
			parameters: getInvoice(),
			credential: freshCredential(),
		});

		expectNoSecretIn(runPlaces(result));
		expect(result.error?.message).toBe('The identity service refused the token request (HTTP 400)');
		expect(result.error?.description).toContain(ECHOED);
		expect(result.error?.description).toContain(`client_secret=${REDACTED}`);
		expect(textOf(result.run.data.resultData.error)).toContain(ECHOED);
		// n8n-core logs the stored error, the service's words with it, as the execution ends.
		const ended = n8nLog
			.entriesOfThisTest()
			.find((entry) => entry.message === 'Workflow execution finished with error');
		expect(textOf(ended?.metadata)).toContain(ECHOED);
	});

	test('500 with client_secret=… in its body: the Continue On Fail item’s details', async () => {
		const form = new URLSearchParams({ client_secret: CLIENT_SECRET }).toString();
		testbed.sim.faults.add({
			route: 'token',
			status: 500,
			body: { error: 'server_error', error_description: `Could not handle ${form}` },
			// The token request is retried (asking twice is harmless): every attempt fails, at once.
			retryAfter: 0,
			times: 5,
		});
		const result = await testbed.harness.runNode({
			parameters: getInvoice(),
			credential: freshCredential(),
			continueOnFail: true,
		});

		expectNoSecretIn(runPlaces(result));
		const [item] = result.items.map((entry) => entry.json);
		expect(item.error).toBe('The identity service refused the token request (HTTP 500)');
		expect(item.details).toContain(`Could not handle client_secret=${REDACTED}`);
		expect(item.details).toContain(ECHOED);
	});

	test('the webhook trigger’s activation error', async () => {
		testbed.sim.faults.add({ route: 'token', status: 400, times: 1 });
		const host = await startHost(testbed, { events: ['*'] }, undefined, {
			credential: freshCredential(),
		});
		const failure = await host.publish().then(
			() => undefined,
			(error: Error) => error,
		);
		await host.close();

		expectNoSecretIn({
			'the activation error': failure,
			'every hook call’s error': host.hookCalls.map((call) => call.error),
		});
		expect(failure?.message).toBe('The identity service refused the token request (HTTP 400)');
		expect(textOf(failure)).toContain(ECHOED);
	});
});

describe('the delivery key, quoted percent-encoded by the Data Service', () => {
	test('Subscription → Create: the error of its Delivery API Key’s create', async () => {
		testbed.sim.faults.add({ route: 'subscriptions.create', status: 422, times: 1 });
		const result = await testbed.harness.runNode({
			parameters: {
				resource: 'subscription',
				operation: 'create',
				notificationUrl: 'https://n8n.example.com/webhook/invoices',
				eventTypes: ['*'],
				additionalFields: { deliveryKey: DELIVERY_KEY },
			},
			credential: testbed.credential,
		});

		expectNoSecretIn(runPlaces(result));
		expect(result.error?.message).toBe('The service could not process the values given');
		expect(result.error?.description).toContain(ECHOED);
		expect(result.error?.description).toContain(`apiKey%3D${REDACTED}`);
	});

	test('the webhook trigger: the activation error of a create that quotes its production key', async () => {
		let host: TriggerHost | undefined;
		try {
			testbed.sim.faults.add({ route: 'subscriptions.create', status: 400, times: 1 });
			host = await startHost(testbed);
			const failure = await host.publish().then(
				() => undefined,
				(error: Error) => error,
			);

			expectNoSecretIn({
				'the activation error': failure,
				'every hook call’s error': host.hookCalls.map((call) => call.error),
			});
			// The key was made, sent and quoted (the simulator recorded it from the quoted body).
			expect([...testbed.sim.secrets().values()]).toContain('deliveryKey');
			expect(textOf(failure)).toContain(`apiKey%3D${REDACTED}`);
		} finally {
			await host?.close();
		}
	});
});

describe('the access token, quoted in a refusal', () => {
	test('a 403 that quotes the token in use', async () => {
		const credential = freshCredential();
		expect((await testbed.harness.runNode({ parameters: getInvoice(), credential })).error).toBe(
			undefined,
		);
		testbed.sim.faults.add({ route: 'invoices.get', status: 403, times: 1 });
		const result = await testbed.harness.runNode({ parameters: getInvoice(), credential });

		expectNoSecretIn(runPlaces(result));
		expect(result.error?.message).toBe('The API key is not allowed to do this');
		expect(result.error?.description).toContain(`The service said: Simulated 403`);
		expect(result.error?.description).toContain(`Bearer ${REDACTED}`);
	});

	test('a 401, then a 403 after the renewal that quotes the previous token and the new one', async () => {
		const credential = freshCredential();
		await testbed.harness.runNode({ parameters: getInvoice(), credential });
		const previous = tokenIn(credential);
		testbed.sim.faults.add({ route: 'invoices.get', status: 401, times: 1 });
		testbed.sim.faults.add({
			route: 'invoices.get',
			status: 403,
			body: {
				code: 'forbidden',
				message: `the token Bearer ${previous} has no right to this invoice, and neither has its successor`,
				details: null,
			},
			times: 1,
		});
		const result = await testbed.harness.runNode({ parameters: getInvoice(), credential });

		expect(tokenIn(credential)).not.toBe(previous);
		expectNoSecretIn(runPlaces(result));
		expect(result.error?.description).toContain(`the token Bearer ${REDACTED} has no right`);
		// The echo quotes the renewed token, sent with the second request.
		expect(result.error?.description).toContain(`"authorization":"Bearer ${REDACTED}"`);
	});

	test('a 401 after the renewal as well', async () => {
		const credential = freshCredential();
		await testbed.harness.runNode({ parameters: getInvoice(), credential });
		testbed.sim.faults.add({ route: 'invoices.get', status: 401, times: 2 });
		const result = await testbed.harness.runNode({ parameters: getInvoice(), credential });

		expectNoSecretIn(runPlaces(result));
		expect(result.error?.message).toBe('The service refused the access token');
		expect(result.error?.description).toContain(`Bearer ${REDACTED}`);
	});

	test('the Polling Trigger’s error (its requests go through the same transport)', async () => {
		const polling = new PollingWorkflow(testbed.harness, freshCredential(), { events: ['*'] });
		expect(await polling.activate()).toBeNull();
		testbed.sim.faults.add({ route: 'invoices.list', status: 403, times: 1 });
		const outcome = await polling.poll();

		expectNoSecretIn({ [`the ${POLLING_NODE_NAME}’s poll`]: outcome });
		expect('error' in outcome && outcome.error.message).toBe(
			'The API key is not allowed to do this',
		);
		expect(textOf(outcome)).toContain(`Bearer ${REDACTED}`);
	});
});
