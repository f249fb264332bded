import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { ServiceClient } from '../transport';

/** One operation of one resource: its parameters and what it does for one input item. */
export interface Operation {
	description: INodeProperties[];
	/** Returns the output records for the item at `itemIndex`. */
	execute(
		this: IExecuteFunctions,
		client: ServiceClient,
		itemIndex: number,
	): Promise<IDataObject[]>;
}

export type Resource = 'invoice' | 'managedAsset' | 'subscription';
