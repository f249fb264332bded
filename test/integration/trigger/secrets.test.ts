import { randomUUID } from 'node:crypto';

import { captureN8nLog } from '../../harness/n8n-log';
import { expectNoSecret } from '../../harness/secrets';
import { secretsOf, type Testbed } from '../../harness/testbed';
import type { TriggerHost } from '../../harness/webhooks';
import {
	eventually,
	keyOf,
	onlySubscription,
	resetSimulator,
	sha256Hex,
	startHost,
	startTriggerTestbed,
} from './helpers';

let testbed: Testbed;
let host: TriggerHost;

/** What n8n logged during the test. */
let n8nLog: ReturnType<typeof captureN8nLog>;

beforeAll(async () => {
	n8nLog = captureN8nLog();
	testbed = await startTriggerTestbed();
});

afterAll(async () => {
	n8nLog.stop();
	await host?.close();
	await resetSimulator(testbed);
	await testbed.close();
});

/** Everything an error shows: message, description, stack and its own fields. */
function describeError(error: unknown): string {
	const { message, description, stack } = error as Error & { description?: string };
	return JSON.stringify({ message, description, stack, own: { ...(error as object) } });
}

test('the delivery key appears nowhere: static data, output, answers, errors, simulator logs', async () => {
	host = await startHost(testbed);
	const keys: string[] = [];
	const errors: unknown[] = [];
	const remember = (error: unknown) => errors.push(error);

	// Production: publish, a good delivery, a duplicate, forged and malformed requests.
	await host.publish();
	const first = onlySubscription(testbed);
	keys.push(keyOf(first));
	testbed.sim.deliveries.setOptions({ duplicate: true });
	await testbed.sim.issueInvoice().event.done;
	testbed.sim.deliveries.setOptions({ duplicate: false });
	const url = `${host.webhookUrl}?apiKey=${encodeURIComponent(keys[0])}`;
	await host.post(`${host.webhookUrl}?apiKey=${keys[0].slice(1)}`, {});
	await host.post(`${host.webhookUrl}?apikey=${keys[0]}`, {});
	await host.post(url, 'not json', { 'content-type': 'text/plain' });
	await host.post(url, { eventId: randomUUID() });

	// Deleted out of band, then published again with a new key.
	testbed.sim.subscriptions.delete(first.id);
	await host.publish();
	keys.push(keyOf(onlySubscription(testbed)));

	// A create that fails, and one whose lookup fails too (errors are kept for inspection).
	await host.unpublish();
	testbed.sim.faults.add({ route: 'subscriptions.create', status: 500, times: 1 });
	await host.publish().catch(remember);
	testbed.sim.faults.add({ route: 'subscriptions.create', status: 500, times: 1 });
	testbed.sim.faults.add({ route: 'subscriptions.list', status: 403, times: 1 });
	await host.publish().catch(remember);
	testbed.sim.faults.clear();
	await host.publish();
	keys.push(keyOf(onlySubscription(testbed)));
	await testbed.sim.issueInvoice().event.done;

	// A delete that fails, then one that works.
	testbed.sim.faults.add({ route: 'subscriptions.delete', status: 403, times: 1 });
	await host.unpublish().catch(remember);
	await host.unpublish();

	// Listen for test event, with its own key.
	await host.listenForTestEvent();
	keys.push(keyOf(onlySubscription(testbed)));
	await testbed.sim.issueInvoice().event.done;
	await eventually(() => !host.listening);
	await testbed.sim.waitForDeliveries(10_000);
	await host.settled();

	expect(errors).toHaveLength(3);
	expect(new Set(keys).size).toBe(4);
	// The first event, the one after the third publish, and the test event; the copy and the forged ones start none.
	expect(host.executions).toHaveLength(3);

	const runs = await Promise.all(host.executions.map(async (execution) => await execution.done));
	const places: Record<string, string> = {
		'saved static data': JSON.stringify(host.workflowStaticData),
		'static data of every hook call': JSON.stringify(
			host.hookCalls.map(({ staticDataBefore, staticDataAfter }) => [
				staticDataBefore,
				staticDataAfter,
			]),
		),
		'hook errors': host.hookCalls
			.map((call) => (call.error ? describeError(call.error) : ''))
			.join(),
		'thrown errors': errors.map(describeError).join(),
		'trigger output': JSON.stringify(host.executions.map((execution) => execution.items)),
		'execution data': JSON.stringify(runs.map((run) => run?.data)),
		'answers to requests': JSON.stringify(host.requests.map((request) => request.body)),
		'simulator request log': JSON.stringify(testbed.sim.log.entries()),
		'simulator delivery log': JSON.stringify(testbed.sim.deliveries.entries()),
		'n8n’s log': n8nLog.lines.join('\n'),
	};
	// The log really was captured: n8n-core logs every execution it runs.
	expect(n8nLog.lines.some((line) => line.startsWith('debug Workflow execution started'))).toBe(
		true,
	);
	const secrets = [...secretsOf(testbed), ...keys];
	for (const [place, text] of Object.entries(places)) expectNoSecret(text, secrets, `the ${place}`);

	// Only the hash is stored, and it is the hash of the key in use.
	expect(
		host.hookCalls.some((call) => call.staticDataAfter.deliveryKeyHash === sha256Hex(keys[2])),
	).toBe(true);
});
