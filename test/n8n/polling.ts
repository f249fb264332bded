/**
 * Polling Trigger workflows in a real n8n: Poll Times in seconds, the polls as the simulator sees
 * them, and waiting for a poll's outcome rather than for its request.
 *
 * n8n refuses a cron that fires more than once a minute ("The polling interval is too short",
 * `isSubMinuteCron`), but it schedules each Poll Times entry on its own. So one custom entry per
 * multiple of a period (`0 * * * * *`, `10 * * * * *`, …) polls every `period` seconds: seen on
 * n8n 2.41.1, in the legacy engine and on the durable scheduler, and on n8n 1.123.81 (a poll
 * every 10 s for 75 s each).
 *
 * n8n's legacy engine does not stop two polls of one trigger from overlapping: choose a period
 * above the slowest poll the test causes (faults, retries and many pages included).
 */
import type { RequestLogEntry, Simulator } from '../simulator';
import type { WorkflowJson } from '../e2e/workflows';
import {
	getExecution,
	hasEnded,
	listExecutions,
	nodeOutput,
	waitFor,
	type Execution,
} from './executions';
import type { N8nInstance } from './instance';

// A type, not an interface: n8n's parameter types accept it then.
export type PollTimes = {
	item: Array<{ mode: 'everyMinute' } | { mode: 'custom'; cronExpression: string }>;
};

/** What users choose most: n8n's "Every Minute" (at a second of the minute n8n draws). */
export const EVERY_MINUTE: PollTimes = { item: [{ mode: 'everyMinute' }] };

/** n8n 2.41's durable scheduler for poll triggers, with durable cursors and a 10 s poll timeout (a 5 s budget). */
export const DURABLE_SCHEDULER = {
	N8N_SCHEDULER_ENABLED: 'true',
	N8N_SCHEDULER_POLL_TRIGGERS_ENABLED: 'true',
	N8N_POLLER_DURABLE_CURSORS_ENABLED: 'true',
	N8N_SCHEDULER_POLL_TIMEOUT: '10',
};

/** n8n's poll budget (getPollBudgetMs) there: the 10 s timeout less a margin of max(20 %, 5 s), at most half. */
export const DURABLE_POLL_BUDGET_MS = 5_000;

/** n8n's poll budget in its legacy engine: PollContext's default, 5 minutes. */
export const LEGACY_POLL_BUDGET_MS = 5 * 60_000;

/** A poll every `seconds` s, at the seconds of the minute that are multiples of it. */
export function pollEvery(seconds: number): PollTimes {
	if (!Number.isInteger(seconds) || seconds < 1 || seconds >= 60 || 60 % seconds !== 0) {
		throw new Error(`pollEvery(${seconds}): the period must divide a minute (5, 10, 15, 20, 30)`);
	}
	return {
		item: Array.from({ length: 60 / seconds }, (_, index) => ({
			mode: 'custom' as const,
			cronExpression: `${index * seconds} * * * * *`,
		})),
	};
}

/** `workflow` with `pollTimes` on every node that has Poll Times (e.g. a docs/examples workflow). */
export function withPollTimes<T extends Pick<WorkflowJson, 'nodes'>>(
	workflow: T,
	pollTimes: PollTimes,
): T {
	return {
		...workflow,
		nodes: workflow.nodes.map((node) =>
			node.parameters?.pollTimes === undefined
				? node
				: { ...node, parameters: { ...node.parameters, pollTimes: structuredClone(pollTimes) } },
		),
	};
}

/**
 * The first-page list requests (with `updatedFrom`) the simulator saw: at least one per poll, more
 * when a poll reads several windows (a backlog, records that moved while it read); to count polls,
 * use `groupPolls`. Requests a fault failed are left out.
 */
export function pollRequests(
	sim: Simulator,
	options: { route?: 'invoices.list' | 'assets.list'; clientId?: string } = {},
): RequestLogEntry[] {
	return sim.log
		.entries({ route: options.route ?? 'invoices.list', clientId: options.clientId })
		.filter(
			(entry) =>
				entry.query.page === '1' && entry.query.updatedFrom !== undefined && entry.status === 200,
		);
}

/** How the requests of one workflow are told apart into polls (groupPolls). */
export interface PollSplits {
	/** A gap this long between two requests ends a poll; by default half the period. */
	gapMs?: number;
	/** When n8n started again (ms since the epoch): requests before and after one are never one poll. */
	restarts?: number[];
	/** The workflow's Poll Times: custom ones say when its scheduled polls begin (not Every Minute's). */
	pollTimes?: PollTimes;
}

/**
 * List requests grouped into polls: a poll's requests follow one another, and the next poll comes
 * a Poll Times period later, so a gap (half the period unless `gapMs` says) ends a poll. How many
 * requests a poll makes (pages, windows, kinds) is the node's business; when polls come is n8n's:
 * - a restart of n8n (`restarts`) ends a poll;
 * - n8n polls once when it activates a workflow (at publishing; in its legacy engine at every start
 *   too), then schedules the Poll Times: so the first poll after a start ends at the first scheduled
 *   time (`pollTimes`) that comes between two of its requests, however close the next poll follows.
 * Each poll's requests in the order they arrived.
 */
export function groupPolls(
	entries: RequestLogEntry[],
	periodSeconds: number,
	{ gapMs = (periodSeconds * 1000) / 2, restarts = [], pollTimes }: PollSplits = {},
): RequestLogEntry[][] {
	const seconds = pollTimes && scheduledSeconds(pollTimes);
	const polls: RequestLogEntry[][] = [];
	// Whether the current poll is the first since a start, and when its last answer came.
	let afterStart = true;
	let answeredBy = 0;
	// The log keeps requests in the order they were answered.
	const arrived = [...entries].sort((a, b) => a.receivedAtMs - b.receivedAtMs);
	for (const entry of arrived) {
		const current = polls.at(-1);
		const last = current?.at(-1);
		const at = entry.receivedAtMs;
		const restarted =
			last && restarts.some((restart) => last.receivedAtMs < restart && restart <= at);
		const scheduled = last && afterStart && seconds && scheduledBetween(seconds, answeredBy, at);
		if (current && last && !restarted && !scheduled && at - last.receivedAtMs < gapMs) {
			current.push(entry);
		} else {
			polls.push([entry]);
			afterStart = !current || restarted === true;
			answeredBy = at;
		}
		answeredBy = Math.max(answeredBy, at + entry.durationMs);
	}
	return polls;
}

/** The seconds of the minute custom Poll Times fire at; undefined where n8n draws them (Every Minute). */
function scheduledSeconds(pollTimes: PollTimes): Set<number> | undefined {
	const seconds = new Set<number>();
	for (const item of pollTimes.item) {
		const second =
			item.mode === 'custom' ? /^(\d+) \* \* \* \* \*$/.exec(item.cronExpression) : null;
		if (!second) return undefined;
		seconds.add(Number(second[1]));
	}
	return seconds;
}

/** Whether a whole second in (fromMs, toMs] is one of `seconds` of its minute (n8n's clock is the soak's). */
function scheduledBetween(seconds: Set<number>, fromMs: number, toMs: number): boolean {
	for (let at = Math.floor(fromMs / 1000) + 1; at * 1000 <= toMs; at++) {
		if (seconds.has(at % 60)) return true;
	}
	return false;
}

/**
 * The first-page requests of a poll that came while an earlier request of it was still being
 * answered: none for one poller, whose windows follow one another (only a window's later pages are
 * read side by side); a second poller at the same moment shows up here.
 */
export function overlappingWindows(poll: RequestLogEntry[]): RequestLogEntry[] {
	return poll.filter(
		(entry, index) =>
			entry.query.page === '1' &&
			poll
				.slice(0, index)
				.some((earlier) => entry.receivedAtMs < earlier.receivedAtMs + earlier.durationMs),
	);
}

/** The workflow's executions n8n is running now (the public API lists them only when asked). */
export async function runningExecutions(
	n8n: N8nInstance,
	workflowId: string,
): Promise<Execution[]> {
	const answer = await n8n.api<{ data: Execution[] }>(
		'GET',
		`/executions?workflowId=${workflowId}&status=running&limit=250`,
	);
	if (answer.status !== 200) throw new Error(`executions: ${answer.status} ${answer.text}`);
	return answer.body.data;
}

/**
 * Waits until an execution whose `triggerNode` output holds an item with `eventId` has ended and
 * none of the workflow's executions is still going; returns all of them, with their data.
 */
export async function waitForPolledEvent(
	n8n: N8nInstance,
	workflowId: string,
	triggerNode: string,
	eventId: string,
	timeoutMs = 120_000,
): Promise<Execution[]> {
	const read = new Map<string, Execution>();
	return await waitFor(
		`an ended execution with event ${eventId}`,
		async () => {
			const listed = await listExecutions(n8n, workflowId);
			if (!listed.every(hasEnded) || (await runningExecutions(n8n, workflowId)).length > 0) {
				return undefined;
			}
			for (const entry of listed) {
				if (!read.has(entry.id)) read.set(entry.id, await getExecution(n8n, entry.id));
			}
			const executions = [...read.values()];
			const found = executions.some((execution) =>
				nodeOutput(execution, triggerNode).some((item) => item.json.eventId === eventId),
			);
			return found ? executions : undefined;
		},
		timeoutMs,
		500,
	);
}

/**
 * Lets one more poll run to its end, for a check that it reported nothing again. A poll that finds
 * nothing leaves no execution, so its request alone says nothing of what it emitted: after the
 * next poll's request, `change()` makes one new change at the service (and returns its eventId),
 * and this waits until the execution reporting it has ended and none is running. Polls of one
 * trigger come one after the other, so whatever the earlier poll emitted has ended by then.
 * Returns every execution of the workflow, with data.
 */
export async function afterOneMorePoll(
	n8n: N8nInstance,
	options: {
		workflowId: string;
		triggerNode: string;
		polls: () => number;
		change: () => string;
		timeoutMs?: number;
	},
): Promise<Execution[]> {
	const timeoutMs = options.timeoutMs ?? 120_000;
	const before = options.polls();
	await waitFor('one more poll', () => options.polls() > before, timeoutMs, 250);
	const sentinel = options.change();
	return await waitForPolledEvent(
		n8n,
		options.workflowId,
		options.triggerNode,
		sentinel,
		timeoutMs,
	);
}
