/* eslint-disable @n8n/community-nodes/no-restricted-imports */
/**
 * Where a workflow's publication stands in n8n 2.x, to wait for a state instead of a time.
 *
 * Publish and unpublish answer at once; n8n applies them in the background, one after the other
 * per workflow (its publication outbox and lifecycle lock). `GET /rest/workflows/{id}/
 * publication-status` says `in_progress` while one is queued or running, else the settled state:
 * `published`, `partial`, `failed` or `not_published`. n8n holds the workflow's lock until trigger
 * operations an unpublish abandoned (a registration still retrying) have ended, so a settled
 * state also means nothing of that workflow still runs in the background. A Polling Trigger's
 * first poll (its baseline) is part of its registration: `published` means the baseline is done.
 * Without the publication service (`N8N_USE_WORKFLOW_PUBLICATION_SERVICE=false`) publish and
 * unpublish act before they answer, and n8n keeps no publication status.
 */
import { setTimeout as sleep } from 'node:timers/promises';

import { waitFor } from './executions';
import type { N8nInstance } from './instance';

export type PublicationState = 'in_progress' | 'published' | 'partial' | 'failed' | 'not_published';

export interface PublicationStatus {
	status: PublicationState;
	triggers: Array<{ nodeId: string; status: string; errorMessage?: string | null }>;
}

/**
 * n8n answers 503 "Database is not ready!" while its database health check lags (a loaded machine);
 * such a request was refused before it did anything, so it is sent again, for up to this long.
 */
const NOT_READY_WAIT_MS = 60_000;

async function untilReady<T extends { status: number }>(send: () => Promise<T>): Promise<T> {
	const deadline = Date.now() + NOT_READY_WAIT_MS;
	for (;;) {
		const answer = await send();
		if (answer.status !== 503 || Date.now() > deadline) return answer;
		await sleep(500);
	}
}

/** The status, or undefined when n8n runs without its publication service. */
async function statusIfKept(
	n8n: N8nInstance,
	workflowId: string,
): Promise<PublicationStatus | undefined> {
	const answer = await untilReady(
		async () =>
			await n8n.rest<{ data: PublicationStatus }>(
				'GET',
				`/workflows/${workflowId}/publication-status`,
			),
	);
	if (answer.status === 404 && answer.text.includes('not available')) return undefined;
	if (answer.status !== 200) {
		throw new Error(`publication-status of ${workflowId}: ${answer.status} ${answer.text}`);
	}
	return answer.body.data;
}

export async function publicationStatus(
	n8n: N8nInstance,
	workflowId: string,
): Promise<PublicationStatus> {
	const status = await statusIfKept(n8n, workflowId);
	if (!status) throw new Error(`n8n keeps no publication status for ${workflowId}`);
	return status;
}

/** Waits until nothing of the workflow's publication is queued or running; returns that state. */
export async function settledPublication(
	n8n: N8nInstance,
	workflowId: string,
	timeoutMs = 120_000,
): Promise<PublicationStatus> {
	return await waitFor(
		`the publication of workflow ${workflowId} to settle`,
		async () => {
			const current = await publicationStatus(n8n, workflowId);
			return current.status === 'in_progress' ? undefined : current;
		},
		timeoutMs,
		250,
	);
}

/**
 * Publishes or unpublishes through the public API, then waits until n8n has done it and returns
 * the state it settled in (without the publication service: the state the API's answer implies).
 */
export async function publishAndSettle(
	n8n: N8nInstance,
	workflowId: string,
	action: 'publish' | 'unpublish',
	timeoutMs = 120_000,
): Promise<PublicationStatus> {
	const answer = await untilReady(
		async () => await n8n.api('POST', `/workflows/${workflowId}/${action}`),
	);
	if (answer.status !== 200) throw new Error(`${action}: ${answer.status} ${answer.text}`);
	let last: PublicationStatus | undefined;
	return await waitFor(
		() => `the ${action} of ${workflowId} to settle (last seen: ${JSON.stringify(last)})`,
		async () => {
			last = (await statusIfKept(n8n, workflowId)) ?? {
				status: action === 'publish' ? 'published' : 'not_published',
				triggers: [],
			};
			return last.status === 'in_progress' ? undefined : last;
		},
		timeoutMs,
		250,
	);
}
