/* eslint-disable @n8n/community-nodes/no-restricted-imports */
/** Waiting on a real n8n, and reading its executions through the public API. */
import { setTimeout as sleep } from 'node:timers/promises';

import type { N8nInstance } from './instance';

/** Polls `probe` until it gives a value other than undefined or false. */
export async function waitFor<T>(
	what: string,
	probe: () => Promise<T | undefined | false> | T | undefined | false,
	timeoutMs = 60_000,
	intervalMs = 100,
): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await probe();
		if (value !== undefined && value !== false) return value;
		if (Date.now() > deadline)
			throw new Error(`Timed out after ${timeoutMs / 1000} s waiting for ${what}`);
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
