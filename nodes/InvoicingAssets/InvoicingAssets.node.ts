import type { INodeType, INodeTypeDescription } from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import * as invoice from './actions/invoice/Invoice.resource';
import * as managedAsset from './actions/managedAsset/ManagedAsset.resource';
import { router } from './actions/router';
import * as subscription from './actions/subscription/Subscription.resource';
import * as listSearch from './methods/listSearch';

export class InvoicingAssets implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Invoicing & Assets',
		name: 'invoicingAssets',
		icon: { light: 'file:invoicingAssets.svg', dark: 'file:invoicingAssets.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle: '={{$parameter["operation"] + ": " + $parameter["resource"]}}',
		description:
			'Get invoices and managed assets, and manage webhook subscriptions, in the Invoicing and Managed-Assets Data Service',
		defaults: { name: 'Invoicing & Assets' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'invoicingAssetsApi', required: true }],
		properties: [
			{
				displayName: 'Resource',
				name: 'resource',
				type: 'options',
				noDataExpression: true,
				options: [
					{ name: 'Invoice', value: 'invoice' },
					{ name: 'Managed Asset', value: 'managedAsset' },
					{ name: 'Subscription', value: 'subscription' },
				],
				default: 'invoice',
			},
			...invoice.description,
			...managedAsset.description,
			...subscription.description,
		],
	};

	methods = { listSearch };

	execute = router;
}
