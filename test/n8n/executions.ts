/* eslint-disable @n8n/community-nodes/no-restricted-imports */
/** Waiting on a real n8n, and reading its executions through the public API. */
import { setTimeout as sleep } from 'node:timers/promises';

import type { N8nInstance } from './instance';

/** Polls `probe` until it gives a value other than undefined or false; `what` names it in the timeout. */
export async function waitFor<T>(
	what: string | (() => string),
	probe: () => Promise<T | undefined | false> | T | undefined | false,
	timeoutMs = 60_000,
	intervalMs = 100,
): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await probe();
		if (value !== undefined && value !== false) return value;
		if (Date.now() > deadline)
			throw new Error(
				`Timed out after ${timeoutMs / 1000} s waiting for ${typeof what === 'string' ? what : what()}`,
			);
		await sleep(intervalMs);
	}
}

export interface NodeRunError {
	message?: string;
	description?: string;
}

export interface Execution {
	id: string;
	status: string;
	finished: boolean;
	mode: string;
	startedAt: string;
	stoppedAt: string | null;
	data?: {
		resultData: {
			error?: NodeRunError;
			runData: Record<
				string,
				Array<{
					executionTime?: number;
					error?: NodeRunError;
					data?: { main: Array<Array<{ json: Record<string, unknown> }>> };
				}>
			>;
		};
	};
}

/** Every execution of a workflow (newest first), following the public API's cursor. */
export async function listExecutions(
	n8n: N8nInstance,
	workflowId: string,
	includeData = false,
): Promise<Execution[]> {
	const all: Execution[] = [];
	let cursor: string | undefined;
	do {
		const answer = await n8n.api<{ data: Execution[]; nextCursor?: string | null }>(
			'GET',
			`/executions?workflowId=${workflowId}&limit=250&includeData=${includeData}${
				cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''
			}`,
		);
		if (answer.status !== 200) throw new Error(`executions: ${answer.status} ${answer.text}`);
		all.push(...answer.body.data);
		cursor = answer.body.nextCursor ?? undefined;
	} while (cursor);
	return all;
}

/** One execution with its data. */
export async function getExecution(n8n: N8nInstance, id: string): Promise<Execution> {
	const answer = await n8n.api<Execution>('GET', `/executions/${id}?includeData=true`);
	if (answer.status !== 200) throw new Error(`execution ${id}: ${answer.status} ${answer.text}`);
	return answer.body;
}

const UNFINISHED = new Set(['new', 'running', 'waiting', 'queued']);

/** True once an execution has ended, whatever its outcome. */
export function hasEnded(execution: Execution): boolean {
	return !UNFINISHED.has(execution.status);
}

/** Waits until the workflow has at least `count` executions and none is still going. */
export async function waitForExecutions(
	n8n: N8nInstance,
	workflowId: string,
	count: number,
	timeoutMs = 300_000,
	intervalMs = 250,
): Promise<Execution[]> {
	return await waitFor(
		`${count} finished executions of workflow ${workflowId}`,
		async () => {
			const list = await listExecutions(n8n, workflowId);
			return list.length >= count && list.every((entry) => !UNFINISHED.has(entry.status))
				? list
				: undefined;
		},
		timeoutMs,
		intervalMs,
	);
}

/** The items a node output in an execution. */
export function nodeOutput(execution: Execution, nodeName: string) {
	return execution.data?.resultData.runData[nodeName]?.[0]?.data?.main?.[0] ?? [];
}

/** The `eventId` of the event a trigger node output in an execution (read with its data). */
export function eventIdOf(execution: Execution, triggerNode: string): string | undefined {
	const value = nodeOutput(execution, triggerNode)[0]?.json.eventId;
	return typeof value === 'string' ? value : undefined;
}

/** Executions (read with their data) by the `eventId` their trigger output. */
export function byEventId(executions: Execution[], triggerNode: string): Map<string, Execution[]> {
	const grouped = new Map<string, Execution[]>();
	for (const execution of executions) {
		const eventId = eventIdOf(execution, triggerNode) ?? '';
		grouped.set(eventId, [...(grouped.get(eventId) ?? []), execution]);
	}
	return grouped;
}

/**
 * Waits until an execution started by event `eventId` has ended, and returns the workflow's ended
 * executions (with data; those in `after` left out) by eventId. Sent after deliveries that must
 * start nothing, such a sentinel event proves they were handled before absence is checked (n8n's
 * public API does not list running executions).
 */
export async function waitForEvent(
	n8n: N8nInstance,
	workflowId: string,
	triggerNode: string,
	eventId: string,
	options: { after?: Execution[]; timeoutMs?: number } = {},
): Promise<Map<string, Execution[]>> {
	const skip = new Set((options.after ?? []).map((execution) => execution.id));
	const read = new Map<string, Execution>();
	return await waitFor(
		`the execution of event ${eventId}`,
		async () => {
			for (const entry of await listExecutions(n8n, workflowId)) {
				if (skip.has(entry.id) || read.has(entry.id) || !hasEnded(entry)) continue;
				read.set(entry.id, await getExecution(n8n, entry.id));
			}
			const grouped = byEventId([...read.values()], triggerNode);
			return grouped.has(eventId) ? grouped : undefined;
		},
		options.timeoutMs ?? 120_000,
		500,
	);
}
