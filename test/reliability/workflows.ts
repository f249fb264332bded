/** The workflows the real-n8n checks publish, as the public API takes them. */
import { randomUUID } from 'node:crypto';

import { EXAMPLE_BASE_URL, EXAMPLES, loadExample } from '../n8n/examples';
import { MINIMAL_TRIGGER_TYPE } from '../n8n/minimal-trigger';
import { CREDENTIAL_TYPE, PACKAGE_NODE, type CredentialRef } from './support';

export const TRIGGER_NAME = 'Invoicing Trigger';
export const WEBHOOK_NAME = 'Webhook';
export const SPLIT_NAME = 'Split Out';
export const GET_NAME = 'Get Invoice';

interface Node {
	id: string;
	name: string;
	type: string;
	typeVersion: number;
	position: [number, number];
	parameters: Record<string, unknown>;
	webhookId?: string;
	credentials?: Record<string, CredentialRef>;
}

function workflow(name: string, nodes: Node[]) {
	const connections: Record<string, unknown> = {};
	for (let index = 0; index + 1 < nodes.length; index++) {
		connections[nodes[index].name] = {
			main: [[{ node: nodes[index + 1].name, type: 'main', index: 0 }]],
		};
	}
	return { name, nodes, connections, settings: { executionOrder: 'v1' } };
}

const at = (index: number): [number, number] => [index * 240, 0];

/** Our action node: Invoice Get of the number an expression gives. */
function getInvoiceNode(
	credential: CredentialRef,
	number: string,
	index: number,
	options = {},
): Node {
	return {
		id: randomUUID(),
		name: GET_NAME,
		type: `${PACKAGE_NODE}.invoicingAssets`,
		typeVersion: 1,
		position: at(index),
		parameters: {
			resource: 'invoice',
			operation: 'get',
			invoiceNumber: { __rl: true, mode: 'number', value: `={{ ${number} }}` },
			options,
		},
		credentials: { [CREDENTIAL_TYPE]: credential },
	};
}

/** Our trigger (all events), alone or followed by an Invoice Get of the event's invoice. */
export function triggerWorkflow(
	credential: CredentialRef,
	webhookId: string,
	name: string,
	getInvoice = false,
) {
	return workflow(name, [
		{
			id: randomUUID(),
			name: TRIGGER_NAME,
			type: `${PACKAGE_NODE}.invoicingAssetsTrigger`,
			typeVersion: 1,
			position: at(0),
			webhookId,
			parameters: { events: ['*'], options: {} },
			credentials: { [CREDENTIAL_TYPE]: credential },
		},
		...(getInvoice ? [getInvoiceNode(credential, '$json.data.invoiceNumber', 1)] : []),
	]);
}

/** The test tree's minimal community trigger (test/n8n/minimal-trigger/), alone. */
export function minimalTriggerWorkflow(webhookId: string, name: string) {
	return workflow(name, [
		{
			id: randomUUID(),
			name: 'Minimal Trigger',
			type: MINIMAL_TRIGGER_TYPE,
			typeVersion: 1,
			position: at(0),
			webhookId,
			parameters: {},
		},
	]);
}

/**
 * n8n's Webhook node (POST, answers on receipt), the same shapes as triggerWorkflow: alone, or
 * followed by the same Invoice Get.
 */
export function coreWebhookWorkflow(
	path: string,
	name: string,
	options: { getInvoice?: CredentialRef } = {},
) {
	return workflow(name, [
		{
			id: randomUUID(),
			name: WEBHOOK_NAME,
			type: 'n8n-nodes-base.webhook',
			typeVersion: 2.1,
			position: at(0),
			webhookId: randomUUID(),
			parameters: {
				httpMethod: 'POST',
				path,
				responseMode: 'onReceived',
				options: {},
			},
		},
		...(options.getInvoice
			? [getInvoiceNode(options.getInvoice, '$json.body.data.invoiceNumber', 1)]
			: []),
	]);
}

/**
 * Webhook (answers with every item of the last node) → Split Out of `body.items` → one Invoice Get
 * per item, through our node or through n8n's HTTP Request node with our credential.
 */
export function invoiceGetWorkflow(
	path: string,
	name: string,
	credential: CredentialRef,
	via:
		| { node: 'ours'; options?: Record<string, unknown> }
		| { node: 'httpRequest'; baseUrl: string },
) {
	const get: Node =
		via.node === 'ours'
			? getInvoiceNode(credential, '$json.invoiceNumber', 2, via.options)
			: {
					id: randomUUID(),
					name: GET_NAME,
					type: 'n8n-nodes-base.httpRequest',
					typeVersion: 4.2,
					position: at(2),
					parameters: {
						method: 'GET',
						url: `=${via.baseUrl}/invoice/v1/invoices/{{ encodeURIComponent($json.invoiceNumber) }}`,
						authentication: 'predefinedCredentialType',
						nodeCredentialType: CREDENTIAL_TYPE,
						options: {},
					},
					credentials: { [CREDENTIAL_TYPE]: credential },
				};
	return workflow(name, [
		{
			id: randomUUID(),
			name: WEBHOOK_NAME,
			type: 'n8n-nodes-base.webhook',
			typeVersion: 2.1,
			position: at(0),
			webhookId: randomUUID(),
			parameters: {
				httpMethod: 'POST',
				path,
				responseMode: 'lastNode',
				responseData: 'allEntries',
				options: {},
			},
		},
		{
			id: randomUUID(),
			name: SPLIT_NAME,
			type: 'n8n-nodes-base.splitOut',
			typeVersion: 1,
			position: at(1),
			parameters: { fieldToSplitOut: 'body.items', options: {} },
		},
		get,
	]);
}

export const LIST_NAME = 'List Invoices';

/**
 * The HTTP Request node → Split Out of docs/examples/http-request-all-invoices.json, the setup the
 * README gives ("Every invoice with the HTTP Request node"): our credential as a predefined
 * credential type, `pageSize` 100, `page` from 1 up until a short page, each page one item, then
 * one item per invoice. Only the base URL is changed, to the simulator's.
 */
export function httpRequestListNodes(credential: CredentialRef, baseUrl: string): Node[] {
	const example = loadExample(EXAMPLES.httpRequestAllInvoices, credential);
	const nodes = example.nodes.filter((node) => node.type !== 'n8n-nodes-base.manualTrigger');
	return nodes.map((node, index) => {
		const parameters = JSON.parse(
			JSON.stringify(node.parameters).replaceAll(EXAMPLE_BASE_URL, baseUrl),
		) as Record<string, unknown>;
		return {
			id: randomUUID(),
			name: node.name,
			type: node.type,
			typeVersion: node.typeVersion,
			position: at(index + 1),
			parameters,
			...(node.credentials
				? { credentials: node.credentials as unknown as Record<string, CredentialRef> }
				: {}),
		};
	});
}

/**
 * Webhook (answers with every item of the last node) → every invoice: our node's Invoice Get Many
 * with Return All, or the HTTP Request node paging through them → Split Out of `items`, one item
 * per invoice (httpRequestListNodes).
 */
export function invoiceReturnAllWorkflow(
	path: string,
	name: string,
	credential: CredentialRef,
	via: { node: 'ours' } | { node: 'httpRequest'; baseUrl: string },
) {
	const list: Node[] =
		via.node === 'ours'
			? [
					{
						id: randomUUID(),
						name: LIST_NAME,
						type: `${PACKAGE_NODE}.invoicingAssets`,
						typeVersion: 1,
						position: at(1),
						parameters: {
							resource: 'invoice',
							operation: 'getAll',
							returnAll: true,
							filters: {},
							options: {},
						},
						credentials: { [CREDENTIAL_TYPE]: credential },
					},
				]
			: httpRequestListNodes(credential, via.baseUrl);
	return workflow(name, [
		{
			id: randomUUID(),
			name: WEBHOOK_NAME,
			type: 'n8n-nodes-base.webhook',
			typeVersion: 2.1,
			position: at(0),
			webhookId: randomUUID(),
			parameters: {
				httpMethod: 'POST',
				path,
				responseMode: 'lastNode',
				responseData: 'allEntries',
				options: {},
			},
		},
		...list,
	]);
}
