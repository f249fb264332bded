import type {
	IHookFunctions,
	INodeType,
	INodeTypeDescription,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

export class InvoicingAssetsTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Invoicing & Assets Trigger',
		name: 'invoicingAssetsTrigger',
		icon: { light: 'file:invoicingAssets.svg', dark: 'file:invoicingAssets.dark.svg' },
		group: ['trigger'],
		subtitle: 'Events',
		version: 1,
		description: 'Starts the workflow when the Data Service sends an event',
		defaults: { name: 'Invoicing & Assets Trigger' },
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'invoicingAssetsApi', required: true }],
		webhooks: [
			{ name: 'default', httpMethod: 'POST', responseMode: 'onReceived', path: 'webhook' },
		],
		properties: [],
	};

	webhookMethods = {
		default: {
			async checkExists(this: IHookFunctions): Promise<boolean> {
				return false;
			},
			async create(this: IHookFunctions): Promise<boolean> {
				return true;
			},
			async delete(this: IHookFunctions): Promise<boolean> {
				return true;
			},
		},
	};

	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		return { workflowData: [this.helpers.returnJsonArray(this.getBodyData())] };
	}
}
