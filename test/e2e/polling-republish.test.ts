/**
 * Publishing the Polling Trigger's workflow again keeps the trigger's place, in a real n8n 2.41.1
 * on its legacy scheduler and on its durable scheduler (durable cursors, a 10 s poll timeout):
 * across a new version with other Poll Times (n8n registers the trigger anew; the static data
 * stays, by node name, or by node id in the durable scheduler's poller_state) and across an
 * unpublish and a publish, each change comes once: those made in between with the next publish.
 * When the simulator's clock has moved past the listing bound, the trigger lists them all once
 * more (settling them) and reports none again.
 */
import { nodeOutput, waitFor } from '../n8n/executions';
import { createCredential } from '../n8n/credentials';
import { N8nInstance } from '../n8n/instance';
import {
	DURABLE_SCHEDULER,
	afterOneMorePoll,
	groupPolls,
	pollEvery,
	pollRequests,
	waitForPolledEvent,
	withPollTimes,
} from '../n8n/polling';
import { publishAndSettle } from '../n8n/publication';
import { disposePackedPackage } from '../n8n/package';
import { startSimulator, type Simulator } from '../simulator';
import { POLLING_NODE_NAME, pollingWorkflow } from './workflows';

jest.setTimeout(15 * 60_000);

/** Poll Times of the first version, and of the new one. */
const FIRST_SECONDS = 10;
const NEW_SECONDS = 5;
const WAIT_MS = 3 * 60_000;

let sim: Simulator | undefined;
let n8n: N8nInstance | undefined;

afterEach(async () => {
	await n8n?.dispose();
	await sim?.close();
	n8n = undefined;
	sim = undefined;
});

afterAll(() => disposePackedPackage());

test.each([
	{ scheduler: 'legacy scheduler', env: {}, baselines: 1 },
	// The first scheduled poll does not go on from the publishing poll's position: it takes the
	// baseline again (docs/choosing-a-trigger.md).
	{ scheduler: 'durable scheduler', env: DURABLE_SCHEDULER, baselines: 2 },
])(
	"publishing a new version, or unpublishing and publishing again, keeps the Polling Trigger's place: the changes made meanwhile come once each, none again — $scheduler",
	async ({ scheduler, env, baselines }) => {
		const service = (sim = await startSimulator({ invoices: 20, assets: 10 }));
		const instance = (n8n = new N8nInstance({
			name: `e2e-polling-republish-${scheduler.split(' ')[0]}`,
			env,
		}));
		await instance.start();
		const credential = await createCredential(instance, service, 'Invoicing & Assets (republish)');
		const workflow = pollingWorkflow(
			credential,
			['invoice.issued', 'invoice.paid'],
			pollEvery(FIRST_SECONDS),
		);
		const created = await instance.api<{ id: string }>('POST', '/workflows', workflow);
		expect(created.status).toBe(200);
		const workflowId = created.body.id;
		const expected: string[] = [];
		const issue = () => {
			const { invoice } = service.issueInvoice();
			expected.push(`invoice.issued:${invoice.invoiceNumber}`);
			return invoice;
		};
		const reported = async (eventId: string) =>
			await waitForPolledEvent(instance, workflowId, POLLING_NODE_NAME, eventId, WAIT_MS);

		// 1. Published: its baseline (the one-record request), and a poll after it.
		const baselineReads = () =>
			service.log
				.entries({ route: 'invoices.list', status: 200 })
				.filter((entry) => entry.query.pageSize === '1').length;
		expect((await publishAndSettle(instance, workflowId, 'publish')).status).toBe('published');
		await waitFor('the baselines', () => baselineReads() >= baselines, WAIT_MS, 250);
		const polls = pollRequests(service).length;
		await waitFor('a poll after the baseline', () => pollRequests(service).length > polls);

		// 2. A change, reported.
		const a = issue();
		await reported(`invoice.issued:${a.invoiceNumber}`);

		// 3. A new version: other Poll Times (the trigger is registered anew), the same node name.
		issue();
		const updated = await instance.api(
			'PUT',
			`/workflows/${workflowId}`,
			withPollTimes(workflow, pollEvery(NEW_SECONDS)),
		);
		expect(updated.status).toBe(200);
		issue();
		expect((await publishAndSettle(instance, workflowId, 'publish')).status).toBe('published');
		await reported(`invoice.issued:${issue().invoiceNumber}`);

		// 4. Unpublished: changes made meanwhile come with the next publish.
		expect((await publishAndSettle(instance, workflowId, 'unpublish')).status).toBe(
			'not_published',
		);
		issue();
		service.payInvoice(a.invoiceNumber);
		expected.push(`invoice.paid:${a.invoiceNumber}`);
		expect((await publishAndSettle(instance, workflowId, 'publish')).status).toBe('published');
		const f = issue();
		await reported(`invoice.issued:${f.invoiceNumber}`);

		// 5. Past the listing bound, a read lists them all again: a settle read (with updatedTo), or a
		// follow read from the settled position (without) when that fits one page.
		const advancedAt = service.log.entries().at(-1)?.seq ?? 0;
		service.clock.advance(6 * 60_000);
		const stamp = (value: unknown) => (value === undefined ? Infinity : Date.parse(String(value)));
		await waitFor(
			'a read of all the changes past the listing bound',
			() =>
				pollRequests(service).some(
					({ seq, query }) =>
						seq > advancedAt &&
						stamp(query.updatedFrom) <= Date.parse(a.updatedAt) &&
						stamp(query.updatedTo) >= Date.parse(f.updatedAt),
				),
			WAIT_MS,
			250,
		);
		// One more poll, then a last change (the sentinel whose execution shows that poll ended).
		const executions = await afterOneMorePoll(instance, {
			workflowId,
			triggerNode: POLLING_NODE_NAME,
			polls: () => groupPolls(pollRequests(service), NEW_SECONDS).length,
			change: () => `invoice.issued:${issue().invoiceNumber}`,
			timeoutMs: WAIT_MS,
		});
		const ids = executions.flatMap((execution) =>
			nodeOutput(execution, POLLING_NODE_NAME).map((item) => String(item.json.eventId)),
		);
		expect([...ids].sort()).toEqual([...expected].sort());
	},
);
