import { ASSET_ID_PATTERN, paths, type Asset } from '../../transport/contract';
import { recordOptions } from '../common.descriptions';
import { getOperation, simplified } from '../records';
import { summarizeAsset } from '../simplify';

const EXAMPLE = 'AST-000123';

export const { description, execute } = getOperation<Asset>({
	resource: 'managedAsset',
	locator: {
		displayName: 'Asset ID',
		name: 'assetId',
		description: 'The managed asset to get',
		searchListMethod: 'searchAssets',
		listPlaceholder: 'Select a managed asset...',
		typedMode: { displayName: 'By ID', name: 'id' },
		example: EXAMPLE,
		pattern: ASSET_ID_PATTERN,
		errorMessage: `Enter an asset ID such as ${EXAMPLE}`,
	},
	options: recordOptions,
	path: paths.asset,
	subject: (id) => `Managed asset '${id}'`,
	output: simplified(summarizeAsset),
});
