/* eslint-disable @n8n/community-nodes/no-restricted-imports */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { IConnections, INode } from 'n8n-workflow';

import { REPOSITORY } from './package';

export const EXAMPLES = {
	newInvoice: 'new-invoice-fetch-assets.json',
	overdueReport: 'daily-overdue-invoices-report.json',
	exactlyOnce: 'new-invoice-exactly-once.json',
	pollInvoices: 'poll-new-and-paid-invoices.json',
};

export interface WorkflowFile {
	name: string;
	nodes: INode[];
	connections: IConnections;
	settings: Record<string, unknown>;
}

/**
 * An importable example from docs/examples, bound to a credential. The files carry no webhook ID
 * (two imports would share its URL); like the editor on import, the trigger gets a fresh one.
 */
export function loadExample(file: string, credential: { id: string; name: string }): WorkflowFile {
	const workflow = JSON.parse(
		readFileSync(join(REPOSITORY, 'docs/examples', file), 'utf8'),
	) as WorkflowFile;
	for (const node of workflow.nodes) {
		if (node.credentials?.invoicingAssetsApi) node.credentials.invoicingAssetsApi = credential;
		if (node.type.endsWith('.invoicingAssetsTrigger')) node.webhookId = randomUUID();
	}
	return workflow;
}
