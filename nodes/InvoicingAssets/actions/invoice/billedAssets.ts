import type { IDataObject, IExecuteFunctions, INodeProperties, JsonObject } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import type { ServiceClient } from '../../transport';
import { createLimiter } from '../concurrency';
import { paths, RECORD_NOT_FOUND_STATUS, type Asset, type Invoice } from '../../transport/contract';
import { httpStatusOf } from '../../transport/errors';
import { billedAssetIds } from '../../transport/responses';
import { summarizeAsset, summarizeInvoice } from '../simplify';
import { concurrencyOption, recordOptions, simplifyOption } from '../common.descriptions';
import { simplified, type RecordOutput } from '../records';
import { readConcurrency } from '../validation';

export const includeBilledAssetsOption: INodeProperties = {
	displayName: 'Include Billed Assets',
	name: 'includeBilledAssets',
	type: 'boolean',
	default: false,
	description:
		'Whether to add the managed assets the invoice’s lines bill as "assets" (one that no longer exists is null, and listed in "missingAssets")',
};

/** The Options of Invoice Get and Get Many. */
export const invoiceOptions: INodeProperties = {
	...recordOptions,
	options: [concurrencyOption, includeBilledAssetsOption, simplifyOption],
};

/**
 * The billed assets of one run of the node. Each asset is fetched once, however many invoices
 * of the run's items bill it, and at most Concurrency asset requests are in flight at a time.
 */
class BilledAssets {
	/** Each asset's request; undefined for an asset the service does not know (any more). */
	private readonly lookups = new Map<string, Promise<Asset | undefined>>();

	private readonly limit: ReturnType<typeof createLimiter>;

	constructor(
		private readonly client: ServiceClient,
		concurrency: number,
	) {
		this.limit = createLimiter(concurrency);
	}

	/** The invoice (simplified when asked) with `assets` and `missingAssets`. */
	async addTo(
		context: IExecuteFunctions,
		invoice: Invoice,
		simplify: boolean,
		itemIndex: number,
	): Promise<IDataObject> {
		const ids = billedAssetIds(invoice);
		const assets = await Promise.all(
			ids.map(
				async (id) =>
					await this.lookup(id, itemIndex).catch((failure: Error) => {
						throw failureForItem(context, failure, id, itemIndex);
					}),
			),
		);
		const missingAssets = ids
			.filter((_id, index) => assets[index] === undefined)
			.map((assetId) => ({
				assetId,
				reason: `Managed asset '${assetId}' was not found (HTTP ${RECORD_NOT_FOUND_STATUS})`,
			}));
		const record = simplify ? summarizeInvoice(invoice) : invoice;
		return {
			...(record as unknown as IDataObject),
			assets: assets.map((asset) => (asset && simplify ? summarizeAsset(asset) : (asset ?? null))),
			missingAssets,
		} as IDataObject;
	}

	private async lookup(assetId: string, itemIndex: number): Promise<Asset | undefined> {
		let lookup = this.lookups.get(assetId);
		if (!lookup) {
			const request = {
				path: paths.asset(assetId),
				subject: `Managed asset '${assetId}'`,
				itemIndex,
			};
			lookup = this.limit(
				async () =>
					await this.client.getRecord<Asset>(request).catch((error: unknown) => {
						if (httpStatusOf(error) === RECORD_NOT_FOUND_STATUS) return undefined;
						throw error;
					}),
			);
			this.lookups.set(assetId, lookup);
		}
		return await lookup;
	}
}

/**
 * A failed asset request fails each invoice that bills the asset, as an error of that invoice's
 * item: its own copy, saying which asset could not be fetched.
 */
function failureForItem(
	context: IExecuteFunctions,
	failure: Error,
	assetId: string,
	itemIndex: number,
): NodeApiError {
	const source = failure as Partial<NodeApiError>;
	return new NodeApiError(
		context.getNode(),
		(source.errorResponse ?? { message: failure.message }) as JsonObject,
		{
			message: `The billed asset '${assetId}' could not be fetched: ${failure.message}`,
			description:
				`Include Billed Assets fetches every asset the invoice bills; this one failed otherwise than by not existing. ${source.description ?? ''}`.trim(),
			httpCode: source.httpCode ?? undefined,
			itemIndex,
		},
	);
}

/** One lookup per node run: the action node makes one ServiceClient per run. */
const runs = new WeakMap<ServiceClient, BilledAssets>();

/** The output of Invoice Get and Get Many: Simplify, and Include Billed Assets. */
export const invoiceOutput: RecordOutput<Invoice> = async (
	context,
	client,
	invoices,
	itemIndex,
) => {
	if (context.getNodeParameter('options.includeBilledAssets', itemIndex, false) !== true) {
		return await simplified(summarizeInvoice)(context, client, invoices, itemIndex);
	}
	const simplify = context.getNodeParameter('options.simplify', itemIndex, false) === true;
	const billedAssets = runs.get(client) ?? new BilledAssets(client, readConcurrency(context));
	runs.set(client, billedAssets);
	return await Promise.all(
		invoices.map(
			async (invoice) => await billedAssets.addTo(context, invoice, simplify, itemIndex),
		),
	);
};
