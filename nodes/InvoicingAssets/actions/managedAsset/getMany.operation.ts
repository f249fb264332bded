import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { ASSET_STATUSES, paths, type Asset, type AssetFilters } from '../../transport/contract';
import {
	customerNumberFilter,
	dateRangeFilters,
	recordOptions,
	statusOptions,
} from '../common.descriptions';
import { getManyOperation, simplified } from '../records';
import { summarizeAsset } from '../simplify';
import { isGiven, optionalText, readDateRange, requireChoice } from '../validation';

export const { description, execute } = getManyOperation<Asset>({
	resource: 'managedAsset',
	filters: [
		customerNumberFilter('the assets'),
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
		...dateRangeFilters('Updated', 'assets last changed'),
	],
	readFilters,
	options: recordOptions,
	listPath: paths.assets,
	output: simplified(summarizeAsset),
});

function readFilters(
	context: IExecuteFunctions,
	itemIndex: number,
	given: IDataObject,
): AssetFilters {
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
	Object.assign(filters, readDateRange(context, itemIndex, given, 'Updated', 'asset'));
	return filters;
}
