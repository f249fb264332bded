import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import type { ServiceClient } from '../../transport';
import { ASSET_ID_PATTERN, paths, summarizeAsset, type Asset } from '../../transport/contract';
import { concurrencyOption, simplifyOption } from '../common.descriptions';
import { requireIdentifier } from '../validation';

const EXAMPLE = 'AST-000123';

const properties: INodeProperties[] = [
	{
		displayName: 'Asset ID',
		name: 'assetId',
		type: 'resourceLocator',
		default: { mode: 'list', value: '' },
		required: true,
		description: 'The managed asset to get',
		modes: [
			{
				displayName: 'From List',
				name: 'list',
				type: 'list',
				placeholder: 'Select a managed asset...',
				typeOptions: { searchListMethod: 'searchAssets', searchable: true },
			},
			{
				displayName: 'By ID',
				name: 'id',
				type: 'string',
				placeholder: `e.g. ${EXAMPLE}`,
				validation: [
					{
						type: 'regex',
						properties: {
							regex: `^\\s*${ASSET_ID_PATTERN}\\s*$`,
							errorMessage: `Enter an asset ID such as ${EXAMPLE}`,
						},
					},
				],
			},
		],
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [concurrencyOption, simplifyOption],
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['managedAsset'], operation: ['get'] } },
	properties,
);

export async function execute(
	this: IExecuteFunctions,
	client: ServiceClient,
	itemIndex: number,
): Promise<IDataObject[]> {
	const assetId = requireIdentifier(
		this,
		itemIndex,
		this.getNodeParameter('assetId', itemIndex, '', { extractValue: true }),
		'Asset ID',
		EXAMPLE,
	);
	const simplify = this.getNodeParameter('options.simplify', itemIndex, false) as boolean;
	const asset = await client.request<Asset>({
		method: 'GET',
		path: paths.asset(assetId),
		subject: `Managed asset '${assetId}'`,
		itemIndex,
	});
	return [(simplify ? summarizeAsset(asset) : asset) as unknown as IDataObject];
}
