import type { INodeType, INodeTypeDescription } from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { pollingTriggerProperties } from './trigger/polling/description';
import { pollChanges } from './trigger/polling/poll';

export class InvoicingAssetsPollingTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Invoicing & Assets Polling Trigger',
		name: 'invoicingAssetsPollingTrigger',
		icon: { light: 'file:invoicingAssets.svg', dark: 'file:invoicingAssets.dark.svg' },
		group: ['trigger'],
		version: 1,
		subtitle:
			'={{ ($parameter["events"] || []).includes("*") ? "All events" : ($parameter["events"] || []).join(", ") }}',
		description:
			'Starts the workflow when invoices or managed assets change, by asking the Data Service on a schedule; needs no public HTTPS address',
		defaults: { name: 'Invoicing & Assets Polling Trigger' },
		polling: true,
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'invoicingAssetsApi', required: true }],
		properties: pollingTriggerProperties,
	};

	poll = pollChanges;
}
