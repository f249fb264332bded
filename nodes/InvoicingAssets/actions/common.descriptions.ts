import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';

export const DEFAULT_CONCURRENCY = 8;
export const MAX_CONCURRENCY = 32;

export const returnAllProperty: INodeProperties = {
	displayName: 'Return All',
	name: 'returnAll',
	type: 'boolean',
	default: false,
	description: 'Whether to return all results or only up to a given limit',
};

export const limitProperty: INodeProperties = {
	displayName: 'Limit',
	name: 'limit',
	type: 'number',
	typeOptions: { minValue: 1 },
	default: 50,
	description: 'Max number of results to return',
	displayOptions: { show: { returnAll: [false] } },
};

export const simplifyOption: INodeProperties = {
	displayName: 'Simplify',
	name: 'simplify',
	type: 'boolean',
	default: false,
	description: 'Whether to return a simplified version of the response instead of the raw data',
};

export const concurrencyOption: INodeProperties = {
	displayName: 'Concurrency',
	name: 'concurrency',
	type: 'number',
	typeOptions: { minValue: 1, maxValue: MAX_CONCURRENCY },
	default: DEFAULT_CONCURRENCY,
	description:
		'How many input items are sent to the service at the same time. Lower it if the service limits your request rate.',
};

/** Options for a status filter, in alphabetical order: "paid" becomes "Paid". */
export function statusOptions(statuses: readonly string[]): INodePropertyOptions[] {
	return statuses
		.map((status) => ({ name: status.charAt(0).toUpperCase() + status.slice(1), value: status }))
		.sort((a, b) => a.name.localeCompare(b.name));
}
