import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import type { ServiceClient } from '../../transport';
import { readAllPages } from '../../transport/pageReader';
import { ASSET_STATUSES, paths, type Asset, type AssetFilters } from '../../transport/contract';
import { summarizeAsset } from '../simplify';
import {
	FIRST_RECORDS_ADVICE,
	limitProperty,
	recordOptions,
	returnAllProperty,
	statusOptions,
	updatedRangeFilters,
} from '../common.descriptions';
import { isGiven, optionalText, readLimit, readUpdatedRange, requireChoice } from '../validation';

const properties: INodeProperties[] = [
	returnAllProperty,
	limitProperty,
	{
		displayName: 'Filters',
		name: 'filters',
		type: 'collection',
		placeholder: 'Add Filter',
		default: {},
		options: [
			{
				displayName: 'Customer Number',
				name: 'customerNumber',
				type: 'string',
				default: '',
				placeholder: 'e.g. CUST-10001',
				description: 'Only the assets of this customer',
			},
			{
				displayName: 'Serial Number',
				name: 'serialNumber',
				type: 'string',
				default: '',
				placeholder: 'e.g. SN4KX7Q2M9PA',
				description: 'Only the asset with this serial number',
			},
			{
				displayName: 'Site',
				name: 'site',
				type: 'string',
				default: '',
				placeholder: 'e.g. Berlin HQ',
				description: 'Only the assets at this site, written exactly as the service spells it',
			},
			{
				displayName: 'Status',
				name: 'status',
				type: 'options',
				options: statusOptions(ASSET_STATUSES),
				default: 'active',
				description: 'Only assets in this state',
			},
			{
				displayName: 'Type',
				name: 'type',
				type: 'string',
				default: '',
				placeholder: 'e.g. router',
				description: 'Only assets of this type, written exactly as the service spells it',
			},
			...updatedRangeFilters('assets'),
		],
	},
	recordOptions,
];

export const description = updateDisplayOptions(
	{ show: { resource: ['managedAsset'], operation: ['getAll'] } },
	properties,
);

export async function execute(
	this: IExecuteFunctions,
	client: ServiceClient,
	itemIndex: number,
): Promise<IDataObject[]> {
	const limit = readLimit(this, itemIndex);
	const filters = readFilters(this, itemIndex);
	const simplify = this.getNodeParameter('options.simplify', itemIndex, false) as boolean;
	const assets = await readAllPages<Asset>(client, {
		path: paths.assets,
		qs: { ...filters },
		limit,
		itemIndex,
		advice: FIRST_RECORDS_ADVICE,
	});
	return (simplify ? assets.map(summarizeAsset) : assets) as unknown as IDataObject[];
}

function readFilters(context: IExecuteFunctions, itemIndex: number): AssetFilters {
	const given = context.getNodeParameter('filters', itemIndex, {}) as IDataObject;
	const filters: AssetFilters = {};
	if (isGiven(given.status)) {
		filters.status = requireChoice(context, itemIndex, given.status, ASSET_STATUSES, 'Status');
	}
	const text = (value: unknown, displayName: string) =>
		optionalText(context, itemIndex, value, displayName);
	const type = text(given.type, 'Type');
	const site = text(given.site, 'Site');
	const customerNumber = text(given.customerNumber, 'Customer Number');
	const serialNumber = text(given.serialNumber, 'Serial Number');
	if (type) filters.type = type;
	if (site) filters.site = site;
	if (customerNumber) filters.customerNumber = customerNumber;
	if (serialNumber) filters.serialNumber = serialNumber;
	Object.assign(filters, readUpdatedRange(context, itemIndex, given, 'asset'));
	return filters;
}
