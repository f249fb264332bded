/**
 * The Polling Trigger run in process on simulated time, as n8n's own `testPollingTriggerNode`
 * runs the Gmail Trigger: static data in, static data out, in seconds. Each poll is the
 * trigger's `runPoll` on the production seam (`seamOf`: the transport's page parsing), whose
 * client answers from the in-memory service (test/simulator/in-memory.ts) through the transport's
 * real retry policy (`sendWithRetries` on the simulated clock, then `toNodeApiError`, as
 * `ServiceClient.requestFull` does). Only the HTTP exchange is replaced; nothing waits for real.
 *
 * Static data is kept as n8n keeps it (see poller.ts, the same over HTTP): saved as JSON after the
 * activation poll and when a poll emits; `durable` as n8n 2.41's durable scheduler with durable
 * cursors: every poll gets the saved static data afresh, a scheduled poll's is committed when it
 * changed it, the activation poll's only when it emits.
 */
import type { IDataObject, IN8nHttpFullResponse, INode, INodeExecutionData } from 'n8n-workflow';

import type { ServiceRequest } from '../../nodes/InvoicingAssets/transport';
import { toNodeApiError } from '../../nodes/InvoicingAssets/transport/errors';
import type { ListClient } from '../../nodes/InvoicingAssets/transport/pageReader';
import { sendWithRetries, type RetryClock } from '../../nodes/InvoicingAssets/transport/retry';
import { selectedEventTypes } from '../../nodes/InvoicingAssets/shared/events';
import { kindOf, POLLABLE_EVENT_TYPES } from '../../nodes/InvoicingAssets/trigger/polling/changes';
import { runPoll } from '../../nodes/InvoicingAssets/trigger/polling/poll';
import { seamOf } from '../../nodes/InvoicingAssets/InvoicingAssetsPollingTrigger.node';
import { InMemoryService, type InMemoryServiceOptions } from '../simulator/in-memory';
import { POLLING_TRIGGER_NODE_TYPE } from './node-types';
import type { PollOutcome } from './polled-events';
import { VirtualTime } from './virtual-time';

/** What n8n-core 2.x's getPollBudgetMs answers when n8n sets no budget. */
export const N8N_DEFAULT_POLL_BUDGET_MS = 5 * 60_000;

const NODE: INode = {
	id: 'polling-trigger',
	name: 'Polling Trigger',
	type: POLLING_TRIGGER_NODE_TYPE,
	typeVersion: 1,
	position: [0, 0],
	parameters: {},
};

/** The simulated time and the in-memory service a test's triggers poll. */
export interface InProcessBed {
	time: VirtualTime;
	sim: InMemoryService;
}

export function inProcessBed(options: InMemoryServiceOptions = {}): InProcessBed {
	const time = new VirtualTime();
	return { time, sim: new InMemoryService(time, options) };
}

/**
 * The ServiceClient of a poll, answered by the in-memory service: each attempt is one request
 * (a timeout ends it as n8n's request helper does), retried by the transport's own policy.
 */
export class InMemoryClient implements ListClient {
	private readonly clock: RetryClock;

	constructor(private readonly bed: InProcessBed) {
		this.clock = {
			now: bed.time.now,
			wait: async (ms) => {
				await bed.time.sleep(ms);
				return true;
			},
		};
	}

	getNode(): INode {
		return NODE;
	}

	async requestFull(request: ServiceRequest): Promise<IN8nHttpFullResponse> {
		const send = async (timeoutMs: number) => await this.attempt(request, timeoutMs);
		const outcome = await sendWithRetries(send, {
			method: request.method,
			deadline: request.deadline,
			clock: this.clock,
		});
		if (outcome.failure === undefined) return outcome.response;
		throw toNodeApiError(outcome.failure, {
			node: NODE,
			itemIndex: request.itemIndex,
			subject: request.subject,
			method: request.method,
			attempts: outcome.attempts,
			elapsedMs: outcome.elapsedMs,
			now: this.clock.now(),
		});
	}

	private async attempt(request: ServiceRequest, timeoutMs: number): Promise<IN8nHttpFullResponse> {
		const query = new URLSearchParams(
			Object.entries(request.qs ?? {}).map(([name, value]): [string, string] => [
				name,
				String(value),
			]),
		);
		const timeout = this.bed.time.timer(timeoutMs);
		const answer = await Promise.race([
			this.bed.sim.request({ method: request.method, path: request.path, query }),
			timeout.done.then(() => 'timeout' as const),
		]);
		timeout.cancel();
		// What n8n's request helper throws when no answer came.
		if (answer === 'timeout')
			throw networkError('ECONNABORTED', `timeout of ${timeoutMs}ms exceeded`);
		if ('dropped' in answer) throw networkError('ECONNRESET', 'socket hang up');
		const body = answer.body as IN8nHttpFullResponse['body'];
		return { statusCode: answer.status, headers: answer.headers, body };
	}
}

function networkError(code: string, message: string): Error {
	return Object.assign(new Error(message), { code });
}

export interface InProcessTriggerOptions {
	/** The Events parameter (`*`: All Events). */
	events?: string[];
	/** n8n's poll budget; n8n-core's default when not given. */
	budgetMs?: number;
	/** n8n 2.41's durable scheduler with durable cursors. */
	durable?: boolean;
	/** The node's static data n8n's database holds before the trigger is first published or started. */
	staticData?: IDataObject;
}

let triggers = 0;

/** A published Polling Trigger, polled in process; the same calls as PollingWorkflow over HTTP. */
export class InProcessTrigger {
	/** The node's static data as n8n's database holds it (JSON). */
	private saved = '{}';

	/** The legacy scheduler's static data in memory while the workflow is active. */
	private live?: IDataObject;

	private held?: string;

	/** The trigger in this n8n process (workflow and node); a restart is a new process. */
	private key = '';

	private readonly workflowId = `polling-workflow-${++triggers}`;

	private processes = 0;

	private readonly client: InMemoryClient;

	private readonly kinds: Array<'invoice' | 'asset'>;

	private readonly wanted: Set<string>;

	private readonly durable: boolean;

	/** What n8n's getPollBudgetMs answers; a test may change it between polls. */
	budgetMs: number;

	/** The items of every execution the polls started, in order. */
	readonly executions: INodeExecutionData[][] = [];

	/** How long each poll took (the activation polls too), in simulated time (ms). */
	readonly durations: number[] = [];

	/** What the trigger logged as warnings. */
	readonly warnings: string[] = [];

	constructor(
		private readonly bed: InProcessBed,
		{ events = ['*'], budgetMs, durable = false, staticData }: InProcessTriggerOptions = {},
	) {
		if (staticData) this.save(staticData);
		this.client = new InMemoryClient(bed);
		const chosen = selectedEventTypes(events);
		const pollable: readonly string[] = POLLABLE_EVENT_TYPES;
		this.wanted = new Set(
			chosen === null ? pollable : (chosen ?? []).filter((type) => pollable.includes(type)),
		);
		this.kinds = [...new Set([...this.wanted].map(kindOf))];
		this.budgetMs = budgetMs ?? N8N_DEFAULT_POLL_BUDGET_MS;
		this.durable = durable;
	}

	/** Publishing (or n8n starting with the workflow published): the activation poll. */
	async activate(): Promise<INodeExecutionData[] | null> {
		this.key = `${this.workflowId}:${NODE.id}#${++this.processes}`;
		this.live = this.load();
		const started = this.bed.time.now();
		const items = await this.run(this.live).finally(() =>
			this.durations.push(this.bed.time.now() - started),
		);
		if (!this.durable) this.save(this.live);
		return items;
	}

	/**
	 * One scheduled poll; a thrown error is returned, as n8n turns it into a trigger error. With
	 * `commitLater` (durable only) the static data of a poll that emits lands only at `commitHeld()`.
	 */
	async poll(commitLater = false): Promise<PollOutcome> {
		if (!this.live) throw new Error('The workflow is not active');
		if (this.durable) this.live = this.load();
		const staticData = this.live;
		const before = this.saved;
		const started = this.bed.time.now();
		try {
			const items = await this.run(staticData);
			if (this.durable && JSON.stringify(staticData) !== before) this.save(staticData);
			if (commitLater && items !== null) {
				this.held = this.saved;
				this.saved = before;
			}
			return { items };
		} catch (error) {
			return { error: error as Error };
		} finally {
			this.durations.push(this.bed.time.now() - started);
		}
	}

	/** The static data of the poll whose commit was held lands now. */
	commitHeld() {
		if (this.held !== undefined) this.saved = this.held;
		this.held = undefined;
	}

	/** n8n stops (memory lost; the database stays) and starts again with the workflow published. */
	async restart(): Promise<INodeExecutionData[] | null> {
		this.live = undefined;
		return await this.activate();
	}

	/** Changes the trigger's static data in place, as a test's fault (n8n saves it as it is). */
	editStaticData(edit: (staticData: IDataObject) => void) {
		if (!this.live) throw new Error('The workflow is not active');
		if (this.durable) this.live = this.load();
		edit(this.live);
		this.save(this.live);
	}

	/** The static data n8n would have saved by now. */
	savedStaticData(): IDataObject {
		return this.load();
	}

	/** One run of the trigger's poll on the seam, to its end in simulated time. */
	private async run(staticData: IDataObject): Promise<INodeExecutionData[] | null> {
		const seam = seamOf(this.client, this.bed.time.now);
		const events = await this.bed.time.run(
			async () =>
				await runPoll(seam, staticData, {
					key: this.key,
					kinds: this.kinds,
					wanted: this.wanted,
					budgetMs: this.budgetMs,
					warn: (message) => this.warnings.push(message),
				}),
		);
		if (events === null) return null;
		// n8n's __emit: the static data is saved, then the execution starts with the items.
		const items = events.map((event) => ({ json: event as unknown as IDataObject }));
		this.save(staticData);
		this.executions.push(items);
		return items;
	}

	private load(): IDataObject {
		return JSON.parse(this.saved) as IDataObject;
	}

	private save(staticData: IDataObject) {
		this.saved = JSON.stringify(staticData);
	}
}
