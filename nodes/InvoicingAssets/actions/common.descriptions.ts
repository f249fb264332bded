import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import type { Operation, Resource } from './types';

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
		'How many input items to send to the service at the same time (lower it if the service limits your request rate)',
};

/** The Options of the operations that read records: Concurrency and Simplify. */
export const recordOptions: INodeProperties = {
	displayName: 'Options',
	name: 'options',
	type: 'collection',
	placeholder: 'Add Option',
	default: {},
	options: [concurrencyOption, simplifyOption],
};

/** A resource locator for one record: picked From List (searchable) or typed in, validated. */
export function recordLocator(record: {
	displayName: string;
	name: string;
	description: string;
	searchListMethod: string;
	listPlaceholder: string;
	typedMode: { displayName: string; name: string };
	example: string;
	/** Unanchored regex source of a valid value. */
	pattern: string;
	errorMessage: string;
}): INodeProperties {
	return {
		displayName: record.displayName,
		name: record.name,
		type: 'resourceLocator',
		default: { mode: 'list', value: '' },
		required: true,
		description: record.description,
		modes: [
			{
				displayName: 'From List',
				name: 'list',
				type: 'list',
				placeholder: record.listPlaceholder,
				typeOptions: { searchListMethod: record.searchListMethod, searchable: true },
			},
			{
				displayName: record.typedMode.displayName,
				name: record.typedMode.name,
				type: 'string',
				placeholder: `e.g. ${record.example}`,
				validation: [
					{
						type: 'regex',
						properties: {
							regex: `^\\s*${record.pattern}\\s*$`,
							errorMessage: record.errorMessage,
						},
					},
				],
			},
		],
	};
}

/** The "Customer Number" filter of a Get Many; `records` as in "Only the invoices". */
export function customerNumberFilter(records: string): INodeProperties {
	return {
		displayName: 'Customer Number',
		name: 'customerNumber',
		type: 'string',
		default: '',
		placeholder: 'e.g. CUST-10001',
		description: `Only ${records} of this customer`,
	};
}

/** A Get Many's "Issued After" / "Issued Before" (or Updated) filters; `records` as in "Only invoices issued". */
export function dateRangeFilters(label: DateRangeLabel, records: string): INodeProperties[] {
	return (['After', 'Before'] as const).map((side) => ({
		displayName: `${label} ${side}`,
		name: `${label.toLowerCase()}${side}`,
		type: 'dateTime',
		default: '',
		description: `Only ${records} at or ${side.toLowerCase()} this time (without a zone, in the workflow’s time zone)`,
	}));
}

export type DateRangeLabel = 'Issued' | 'Updated';

/** Options for a status filter, in alphabetical order: "paid" becomes "Paid". */
export function statusOptions(statuses: readonly string[]): INodePropertyOptions[] {
	return statuses
		.map((status) => ({ name: status.charAt(0).toUpperCase() + status.slice(1), value: status }))
		.sort((a, b) => a.name.localeCompare(b.name));
}

/** A resource's Operation parameter (its first choice by default), then its operations' parameters. */
export function resourceDescription(
	resource: Resource,
	operations: Record<string, Operation>,
	choices: Array<INodePropertyOptions & { description: string; action: string }>,
	defaultOperation = String(choices[0].value),
): INodeProperties[] {
	return [
		{
			displayName: 'Operation',
			name: 'operation',
			type: 'options',
			noDataExpression: true,
			displayOptions: { show: { resource: [resource] } },
			options: choices,
			default: defaultOperation,
		},
		...Object.values(operations).flatMap((operation) => operation.description),
	];
}
