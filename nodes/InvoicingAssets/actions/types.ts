import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { ServiceClient } from '../transport';

/** One operation of one resource: its parameters and what it does for one input item. */
export interface Operation {
	description: INodeProperties[];
	/**
	 * Set where a repeat is not harmless (e.g. a create): items then run one by one, so a failure
	 * that stops the run leaves no later item already sent.
	 */
	oneItemAtATime?: boolean;
	/** Returns the output records for the item at `itemIndex`. */
	execute(
		this: IExecuteFunctions,
		client: ServiceClient,
		itemIndex: number,
	): Promise<IDataObject[]>;
}

export type Resource = 'invoice' | 'managedAsset' | 'subscription';
