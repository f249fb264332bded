import type { IHookFunctions, INodeType, INodeTypeDescription } from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { receiveDelivery } from './trigger/delivery';
import { triggerProperties } from './trigger/description';
import {
	createSubscription,
	deleteSubscription,
	subscriptionExists,
	WEBHOOK_NAME,
} from './trigger/subscription';

export class InvoicingAssetsTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Invoicing & Assets Trigger',
		name: 'invoicingAssetsTrigger',
		icon: { light: 'file:invoicingAssets.svg', dark: 'file:invoicingAssets.dark.svg' },
		group: ['trigger'],
		version: 1,
		subtitle:
			'={{ ($parameter["events"] || []).includes("*") ? "All events" : ($parameter["events"] || []).join(", ") }}',
		description: 'Starts the workflow when the Data Service sends an event, such as a new invoice',
		defaults: { name: 'Invoicing & Assets Trigger' },
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'invoicingAssetsApi', required: true }],
		webhooks: [
			{
				name: WEBHOOK_NAME,
				httpMethod: 'POST',
				responseMode: 'onReceived',
				// Empty, so n8n answers with webhook()'s `webhookResponse` (a small JSON acknowledgement);
				// left out, n8n would answer the literal text "firstEntryJson".
				responseData: '',
				path: 'webhook',
			},
		],
		properties: triggerProperties,
	};

	webhookMethods = {
		default: {
			async checkExists(this: IHookFunctions): Promise<boolean> {
				return await subscriptionExists.call(this);
			},
			async create(this: IHookFunctions): Promise<boolean> {
				return await createSubscription.call(this);
			},
			async delete(this: IHookFunctions): Promise<boolean> {
				return await deleteSubscription.call(this);
			},
		},
	};

	webhook = receiveDelivery;
}
