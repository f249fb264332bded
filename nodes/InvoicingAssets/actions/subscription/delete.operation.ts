import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import type { ServiceClient } from '../../transport';
import { paths } from '../../transport/contract';
import { requireText } from '../validation';

const properties: INodeProperties[] = [
	{
		displayName: 'Subscription',
		name: 'subscriptionId',
		type: 'resourceLocator',
		default: { mode: 'list', value: '' },
		required: true,
		description: 'The webhook subscription to delete',
		modes: [
			{
				displayName: 'From List',
				name: 'list',
				type: 'list',
				typeOptions: { searchListMethod: 'searchSubscriptions', searchable: true },
			},
			{
				displayName: 'By ID',
				name: 'id',
				type: 'string',
				placeholder: 'e.g. 3f2c9a7e-1b4d-4c8e-9f0a-2d6b8e1c5a47',
				validation: [
					{
						type: 'regex',
						properties: {
							regex:
								'^\\s*[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\\s*$',
							errorMessage:
								'Enter a subscription ID, a GUID such as 3f2c9a7e-1b4d-4c8e-9f0a-2d6b8e1c5a47',
						},
					},
				],
			},
		],
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['subscription'], operation: ['delete'] } },
	properties,
);

export async function execute(
	this: IExecuteFunctions,
	client: ServiceClient,
	itemIndex: number,
): Promise<IDataObject[]> {
	const id = requireText(
		this,
		itemIndex,
		this.getNodeParameter('subscriptionId', itemIndex, '', { extractValue: true }),
		'Subscription',
		'3f2c9a7e-1b4d-4c8e-9f0a-2d6b8e1c5a47',
	);
	await client.request({
		method: 'DELETE',
		path: paths.subscription(id),
		subject: `Subscription '${id}'`,
		itemIndex,
	});
	return [{ deleted: true }];
}
