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
 */
import { waitFor } from './executions';
import type { N8nInstance } from './instance';

export type PublicationState = 'in_progress' | 'published' | 'partial' | 'failed' | 'not_published';

export interface PublicationStatus {
	status: PublicationState;
	triggers: Array<{ nodeId: string; status: string; errorMessage?: string | null }>;
}

export async function publicationStatus(
	n8n: N8nInstance,
	workflowId: string,
): Promise<PublicationStatus> {
	const answer = await n8n.rest<{ data: PublicationStatus }>(
		'GET',
		`/workflows/${workflowId}/publication-status`,
	);
	if (answer.status !== 200) {
		throw new Error(`publication-status of ${workflowId}: ${answer.status} ${answer.text}`);
	}
	return answer.body.data;
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
