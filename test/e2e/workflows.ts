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

/** Trigger (invoice.issued) → Invoice Get → Managed Asset Get of the first line's asset. */
export function invoiceToAssetWorkflow(
	credential: { id: string; name: string },
	webhookId: string,
): WorkflowJson {
	const credentials = { [CREDENTIAL_TYPE]: credential };
	return {
		name: `New invoice → fetch → asset ${webhookId.slice(0, 8)}`,
		settings: { executionOrder: 'v1' },
		nodes: [
			{
				id: 'a0c7f0c2-1b1e-4f6e-9a51-1d2f3e4a5b60',
				name: NODE_NAMES.trigger,
				type: TRIGGER_TYPE,
				typeVersion: 1,
				position: [0, 0],
				webhookId,
				parameters: { events: ['invoice.issued'], options: {} },
				credentials,
			},
			{
				id: 'b1d8e1d3-2c2f-4a7f-8b62-2e3f4a5b6c71',
				name: NODE_NAMES.invoice,
				type: ACTION_TYPE,
				typeVersion: 1,
				position: [260, 0],
				parameters: {
					resource: 'invoice',
					operation: 'get',
					invoiceNumber: { __rl: true, mode: 'number', value: '={{ $json.data.invoiceNumber }}' },
					options: {},
				},
				credentials,
			},
			{
				id: 'c2e9f2e4-3d3a-4b8a-9c73-3f4a5b6c7d82',
				name: NODE_NAMES.asset,
				type: ACTION_TYPE,
				typeVersion: 1,
				position: [520, 0],
				parameters: {
					resource: 'managedAsset',
					operation: 'get',
					assetId: { __rl: true, mode: 'id', value: '={{ $json.lines[0].assetId }}' },
					options: {},
				},
				credentials,
			},
		],
		connections: {
			[NODE_NAMES.trigger]: { main: [[{ node: NODE_NAMES.invoice, type: 'main', index: 0 }]] },
			[NODE_NAMES.invoice]: { main: [[{ node: NODE_NAMES.asset, type: 'main', index: 0 }]] },
		},
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
	credential: { id: string; name: string },
	webhookId: string,
): WorkflowJson {
	const credentials = { [CREDENTIAL_TYPE]: credential };
	const names = FOUR_NODE_NAMES;
	const next = (node: string) => ({ main: [[{ node, type: 'main' as const, index: 0 }]] });
	return {
		name: `New invoice → fetch → split → assets ${webhookId.slice(0, 8)}`,
		settings: { executionOrder: 'v1' },
		nodes: [
			{
				id: 'd3fa03f5-4e4b-4c9b-8d84-4a5b6c7d8e93',
				name: names.trigger,
				type: TRIGGER_TYPE,
				typeVersion: 1,
				position: [0, 0],
				webhookId,
				parameters: { events: ['invoice.issued'], options: {} },
				credentials,
			},
			{
				id: 'e4ab14a6-5f5c-4dac-9e95-5b6c7d8e9fa4',
				name: names.invoice,
				type: ACTION_TYPE,
				typeVersion: 1,
				position: [240, 0],
				parameters: {
					resource: 'invoice',
					operation: 'get',
					invoiceNumber: { __rl: true, mode: 'number', value: '={{ $json.data.invoiceNumber }}' },
					options: { simplify: true },
				},
				credentials,
			},
			{
				id: 'f5bc25b7-6a6d-4ebd-8fa6-6c7d8e9fa0b5',
				name: names.split,
				type: 'n8n-nodes-base.splitOut',
				typeVersion: 1,
				position: [480, 0],
				parameters: { fieldToSplitOut: 'assetIds', include: 'allOtherFields', options: {} },
			},
			{
				id: '06cd36c8-7b7e-4fce-9ab7-7d8e9fa0b1c6',
				name: names.asset,
				type: ACTION_TYPE,
				typeVersion: 1,
				position: [720, 0],
				parameters: {
					resource: 'managedAsset',
					operation: 'get',
					assetId: { __rl: true, mode: 'id', value: '={{ $json.assetIds }}' },
					options: {},
				},
				credentials,
			},
		],
		connections: {
			[names.trigger]: next(names.invoice),
			[names.invoice]: next(names.split),
			[names.split]: next(names.asset),
		},
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
