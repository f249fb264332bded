/* eslint-disable @n8n/community-nodes/no-restricted-imports */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { IConnections, INode } from 'n8n-workflow';

import type { CredentialReference } from './credentials';
import { REPOSITORY } from './package';

export const EXAMPLES = {
	newInvoice: 'new-invoice-fetch-assets.json',
	overdueReport: 'daily-overdue-invoices-report.json',
	overdueReminder: 'overdue-invoice-reminder.json',
	exactlyOnce: 'new-invoice-exactly-once.json',
	pollInvoices: 'poll-new-and-paid-invoices.json',
	httpRequestAllInvoices: 'http-request-all-invoices.json',
};

/** The base URL the examples' HTTP Request nodes carry, for the user to replace with theirs. */
export const EXAMPLE_BASE_URL = 'https://api.example.com';

export interface WorkflowFile {
	name: string;
	nodes: INode[];
	connections: IConnections;
	settings: Record<string, unknown>;
}

/**
 * An importable example from docs/examples, bound to a credential (and to `others` by credential
 * type, e.g. `postgres`). The files carry no webhook ID (two imports would share its URL); like
 * the editor on import, the trigger gets a fresh one.
 */
export function loadExample(
	file: string,
	credential: CredentialReference,
	others: Record<string, CredentialReference> = {},
): WorkflowFile {
	const workflow = JSON.parse(
		readFileSync(join(REPOSITORY, 'docs/examples', file), 'utf8'),
	) as WorkflowFile;
	const bound: Record<string, CredentialReference> = { ...others, invoicingAssetsApi: credential };
	for (const node of workflow.nodes) {
		for (const type of Object.keys(node.credentials ?? {})) {
			if (!bound[type]) throw new Error(`${file}: no credential given for ${type}`);
			(node.credentials as Record<string, CredentialReference>)[type] = bound[type];
		}
		if (node.type.endsWith('.invoicingAssetsTrigger')) node.webhookId = randomUUID();
	}
	return workflow;
}
