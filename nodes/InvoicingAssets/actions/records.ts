/**
 * What Get and Get Many of invoices and managed assets share; each operation's file says what
 * differs: its locator or filters, its path and its output.
 */
import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import type { ServiceClient } from '../transport';
import { readAllPages } from '../transport/pageReader';
import { limitProperty, recordLocator, returnAllProperty } from './common.descriptions';
import type { Operation, Resource } from './types';
import { readLimit, requireIdentifier } from './validation';

/** The output items of one input item's records: Simplify, and what else the Options add. */
export type RecordOutput<T> = (
	context: IExecuteFunctions,
	client: ServiceClient,
	records: T[],
	itemIndex: number,
) => Promise<IDataObject[]>;

/** The records as items, each summarized by `summarize` when Simplify is on. */
export function simplified<T>(summarize: (record: T) => object): RecordOutput<T> {
	return async (context, _client, records, itemIndex) => {
		const simplify = context.getNodeParameter('options.simplify', itemIndex, false) === true;
		return (simplify ? records.map(summarize) : records) as unknown as IDataObject[];
	};
}

/** Get: the record the resource locator names, as one item. */
export function getOperation<T>(get: {
	resource: Resource;
	locator: Parameters<typeof recordLocator>[0];
	options: INodeProperties;
	path: (id: string) => string;
	/** Names the record in messages, e.g. "Invoice 'INV-1'". */
	subject: (id: string) => string;
	output: RecordOutput<T>;
}): Operation {
	const { name, displayName, example } = get.locator;
	return {
		description: updateDisplayOptions({ show: { resource: [get.resource], operation: ['get'] } }, [
			recordLocator(get.locator),
			get.options,
		]),
		async execute(this: IExecuteFunctions, client: ServiceClient, itemIndex: number) {
			const value = this.getNodeParameter(name, itemIndex, '', { extractValue: true });
			const id = requireIdentifier(this, itemIndex, value, displayName, example);
			const record = await client.getRecord<T>({
				path: get.path(id),
				subject: get.subject(id),
				itemIndex,
			});
			return await get.output(this, client, [record], itemIndex);
		},
	};
}

/** Get Many: Return All or Limit, then the records its Filters select, page by page. */
export function getManyOperation<T>(getMany: {
	resource: Resource;
	filters: INodeProperties[];
	/** The list's query for the Filters as given; a bad value is an error naming it. */
	readFilters: (context: IExecuteFunctions, itemIndex: number, given: IDataObject) => object;
	options: INodeProperties;
	listPath: string;
	output: RecordOutput<T>;
}): Operation {
	const filters: INodeProperties = {
		displayName: 'Filters',
		name: 'filters',
		type: 'collection',
		placeholder: 'Add Filter',
		default: {},
		options: getMany.filters,
	};
	return {
		description: updateDisplayOptions(
			{ show: { resource: [getMany.resource], operation: ['getAll'] } },
			[returnAllProperty, limitProperty, filters, getMany.options],
		),
		async execute(this: IExecuteFunctions, client: ServiceClient, itemIndex: number) {
			const limit = readLimit(this, itemIndex);
			const given = this.getNodeParameter('filters', itemIndex, {}) as IDataObject;
			const records = await readAllPages<T>(client, {
				path: getMany.listPath,
				qs: { ...getMany.readFilters(this, itemIndex, given) },
				limit,
				itemIndex,
			});
			return await getMany.output(this, client, records, itemIndex);
		},
	};
}
