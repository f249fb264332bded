import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import type { ServiceClient } from '../../transport';
import { ASSET_ID_PATTERN, paths, type Asset } from '../../transport/contract';
import { summarizeAsset } from '../simplify';
import { recordLocator, recordOptions } from '../common.descriptions';
import { requireIdentifier } from '../validation';

const EXAMPLE = 'AST-000123';

const properties: INodeProperties[] = [
	recordLocator({
		displayName: 'Asset ID',
		name: 'assetId',
		description: 'The managed asset to get',
		searchListMethod: 'searchAssets',
		listPlaceholder: 'Select a managed asset...',
		typedMode: { displayName: 'By ID', name: 'id' },
		example: EXAMPLE,
		pattern: ASSET_ID_PATTERN,
		errorMessage: `Enter an asset ID such as ${EXAMPLE}`,
	}),
	recordOptions,
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
	const asset = await client.getRecord<Asset>({
		path: paths.asset(assetId),
		subject: `Managed asset '${assetId}'`,
		itemIndex,
	});
	return [(simplify ? summarizeAsset(asset) : asset) as unknown as IDataObject];
}
