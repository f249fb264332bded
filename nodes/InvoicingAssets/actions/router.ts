import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { ServiceClient } from '../transport';
import { mapWithConcurrency } from './concurrency';
import {
	EXPIRY_WARNING_DAYS,
	daysUntilApiKeyExpiry,
	formatExpiryDate,
	isApiKeyExpired,
	readApiKeyExpiry,
} from '../shared/apiKeyExpiry';
import { operations as invoiceOperations } from './invoice/Invoice.resource';
import { operations as managedAssetOperations } from './managedAsset/ManagedAsset.resource';
import { operations as subscriptionOperations } from './subscription/Subscription.resource';
import type { Operation, Resource } from './types';
import { readConcurrency } from './validation';

const resources: Record<Resource, Record<string, Operation>> = {
	invoice: invoiceOperations,
	managedAsset: managedAssetOperations,
	subscription: subscriptionOperations,
};

type Outcome = { records: IDataObject[] } | { error: Error };

export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const resource = this.getNodeParameter('resource', 0) as Resource;
	const operationName = this.getNodeParameter('operation', 0) as string;
	const operation = resources[resource]?.[operationName];
	if (!operation) {
		throw new NodeOperationError(
			this.getNode(),
			`The operation "${operationName}" of resource "${resource}" is not supported`,
		);
	}
	const concurrency = operation.oneItemAtATime ? 1 : readConcurrency(this);
	const client = new ServiceClient(this);
	const continueOnFail = this.continueOnFail();

	let stopped = false;
	const outcomes = await mapWithConcurrency(
		items,
		concurrency,
		async (_item, itemIndex): Promise<Outcome> => {
			if (stopped) return { records: [] };
			try {
				return { records: await operation.execute.call(this, client, itemIndex) };
			} catch (error) {
				if (!continueOnFail) stopped = true;
				return { error: error as Error };
			}
		},
	);

	const output: INodeExecutionData[] = [];
	for (const [itemIndex, outcome] of outcomes.entries()) {
		if ('error' in outcome) {
			if (!continueOnFail) throw asNodeError(this, outcome.error, itemIndex);
			const { message, description } = outcome.error as Error & { description?: string };
			output.push({
				json: { error: message, ...(description ? { details: description } : {}) },
				pairedItem: { item: itemIndex },
			});
			continue;
		}
		for (const record of outcome.records)
			output.push({ json: record, pairedItem: { item: itemIndex } });
	}

	await warnWhenApiKeyExpiresSoon(this, client);
	return [output];
}

function asNodeError(context: IExecuteFunctions, error: Error, itemIndex: number) {
	if (error instanceof NodeApiError || error instanceof NodeOperationError) return error;
	return new NodeOperationError(context.getNode(), error, { itemIndex });
}

async function warnWhenApiKeyExpiresSoon(context: IExecuteFunctions, client: ServiceClient) {
	// A credential that cannot be read has failed the items already; the hint must not fail the run.
	const credentials = await client.credentials().catch(() => undefined);
	const expiresOn = readApiKeyExpiry(credentials?.keyExpiresOn);
	if (!expiresOn || isApiKeyExpired(expiresOn)) return;
	const days = daysUntilApiKeyExpiry(expiresOn);
	if (days > EXPIRY_WARNING_DAYS) return;
	context.addExecutionHints({
		message: `The API key of this credential expires on ${formatExpiryDate(expiresOn)} (in ${days} day${days === 1 ? '' : 's'}). Create a replacement key in the identity portal before then and update the credential: an expired key cannot be revived or extended.`,
		type: 'warning',
		location: 'outputPane',
	});
}
