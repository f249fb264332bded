import { randomUUID } from 'node:crypto';

import type { IConnections, INode } from 'n8n-workflow';

import { CREDENTIAL_TYPE } from '../n8n/credentials';
import { PACKAGE_NAME } from '../n8n/package';
import { EVERY_MINUTE, type PollTimes } from '../n8n/polling';

export const TRIGGER_TYPE = `${PACKAGE_NAME}.invoicingAssetsTrigger`;
export const ACTION_TYPE = `${PACKAGE_NAME}.invoicingAssets`;
export { CREDENTIAL_TYPE };

export interface WorkflowJson {
	name: string;
	nodes: INode[];
	connections: IConnections;
	settings: Record<string, unknown>;
}

export const NODE_NAMES = {
	trigger: 'New Invoice Issued',
	invoice: 'Get Invoice',
	asset: 'Get First Billed Asset',
};

type CredentialReference = { id: string; name: string };

/** Connections that run `nodes` one after another, each on the one before's output. */
export function inLine(nodes: Array<Pick<INode, 'name'>>): IConnections {
	return Object.fromEntries(
		nodes
			.slice(0, -1)
			.map((node, index) => [
				node.name,
				{ main: [[{ node: nodes[index + 1].name, type: 'main', index: 0 }]] },
			]),
	);
}

/** The nodes of this package the workflows below are made of, in a line 240 px apart. */
function packageNodes(credential: CredentialReference, webhookId: string) {
	const credentials = { [CREDENTIAL_TYPE]: credential };
	const node = (name: string, type: string, column: number, parameters: INode['parameters']) => ({
		id: randomUUID(),
		name,
		type,
		typeVersion: 1,
		position: [240 * column, 0] as [number, number],
		parameters,
		credentials,
	});
	return {
		newInvoice: (name: string): INode => ({
			...node(name, TRIGGER_TYPE, 0, { events: ['invoice.issued'], options: {} }),
			webhookId,
		}),
		/** Invoice Get of the invoice the trigger's event names. */
		invoiceOfEvent: (name: string, options: INode['parameters'] = {}): INode =>
			node(name, ACTION_TYPE, 1, {
				resource: 'invoice',
				operation: 'get',
				invoiceNumber: { __rl: true, mode: 'number', value: '={{ $json.data.invoiceNumber }}' },
				options,
			}),
		asset: (name: string, column: number, assetId: string): INode =>
			node(name, ACTION_TYPE, column, {
				resource: 'managedAsset',
				operation: 'get',
				assetId: { __rl: true, mode: 'id', value: assetId },
				options: {},
			}),
	};
}

/** Trigger (invoice.issued) → Invoice Get → Managed Asset Get of the first line's asset. */
export function invoiceToAssetWorkflow(
	credential: CredentialReference,
	webhookId: string,
): WorkflowJson {
	const make = packageNodes(credential, webhookId);
	const nodes = [
		make.newInvoice(NODE_NAMES.trigger),
		make.invoiceOfEvent(NODE_NAMES.invoice),
		make.asset(NODE_NAMES.asset, 2, '={{ $json.lines[0].assetId }}'),
	];
	return {
		name: `New invoice → fetch → asset ${webhookId.slice(0, 8)}`,
		settings: { executionOrder: 'v1' },
		nodes,
		connections: inLine(nodes),
	};
}

export const FOUR_NODE_NAMES = {
	trigger: 'New Invoice Issued',
	invoice: 'Get Invoice',
	split: 'One Item per Billed Asset',
	asset: 'Get Managed Asset',
};

/**
 * The new-invoice automation as it was built before Include Billed Assets, and as users may still
 * build it: Trigger (invoice.issued) → Invoice Get (Simplify) → Split Out assetIds → Managed Asset Get.
 */
export function fourNodeInvoiceAssetsWorkflow(
	credential: CredentialReference,
	webhookId: string,
): WorkflowJson {
	const make = packageNodes(credential, webhookId);
	const names = FOUR_NODE_NAMES;
	const nodes = [
		make.newInvoice(names.trigger),
		make.invoiceOfEvent(names.invoice, { simplify: true }),
		{
			id: randomUUID(),
			name: names.split,
			type: 'n8n-nodes-base.splitOut',
			typeVersion: 1,
			position: [480, 0] as [number, number],
			parameters: { fieldToSplitOut: 'assetIds', include: 'allOtherFields', options: {} },
		},
		make.asset(names.asset, 3, '={{ $json.assetIds }}'),
	];
	return {
		name: `New invoice → fetch → split → assets ${webhookId.slice(0, 8)}`,
		settings: { executionOrder: 'v1' },
		nodes,
		connections: inLine(nodes),
	};
}

export const POLLING_TRIGGER_TYPE = `${PACKAGE_NAME}.invoicingAssetsPollingTrigger`;
export const POLLING_NODE_NAME = 'Invoice Changes';

/**
 * The Polling Trigger → No Operation, on Every Minute unless `pollTimes` say otherwise (tests poll
 * in seconds: `pollEvery` of test/n8n/polling.ts).
 */
export function pollingWorkflow(
	credential: { id: string; name: string },
	events: string[] = ['invoice.issued', 'invoice.paid'],
	pollTimes: PollTimes = EVERY_MINUTE,
): WorkflowJson {
	return {
		name: `Polling ${events.join(', ')} ${Date.now()}`,
		settings: { executionOrder: 'v1' },
		nodes: [
			{
				id: 'd3fa03f5-4e4b-4c9b-8d84-4a5b6c7d8e93',
				name: POLLING_NODE_NAME,
				type: POLLING_TRIGGER_TYPE,
				typeVersion: 1,
				position: [0, 0],
				parameters: { pollTimes: structuredClone(pollTimes), events },
				credentials: { [CREDENTIAL_TYPE]: credential },
			},
			{
				id: 'e40b1406-5f5c-4dac-9e95-5b6c7d8e9fa4',
				name: 'Each Change',
				type: 'n8n-nodes-base.noOp',
				typeVersion: 1,
				position: [260, 0],
				parameters: {},
			},
		],
		connections: {
			[POLLING_NODE_NAME]: { main: [[{ node: 'Each Change', type: 'main', index: 0 }]] },
		},
	};
}
