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

export interface MissingAsset {
	assetId: string;
	reason: string;
}

type Lookup = { asset: Asset } | { missing: MissingAsset } | { failure: Error };

/**
 * The billed assets of one run of the node. Each asset is fetched once, however many invoices
 * of the run's items bill it, and at most Concurrency asset requests are in flight at a time.
 */
class BilledAssets {
	private readonly lookups = new Map<string, Promise<Lookup>>();

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
		const lookups = await Promise.all(ids.map(async (id) => await this.lookup(id, itemIndex)));
		const assets: Array<IDataObject | null> = [];
		const missingAssets: MissingAsset[] = [];
		for (const [index, lookup] of lookups.entries()) {
			if ('failure' in lookup) throw failureForItem(context, lookup.failure, ids[index], itemIndex);
			if ('missing' in lookup) {
				assets.push(null);
				missingAssets.push(lookup.missing);
				continue;
			}
			const asset = simplify ? summarizeAsset(lookup.asset) : lookup.asset;
			assets.push(asset as unknown as IDataObject);
		}
		const record = simplify ? summarizeInvoice(invoice) : invoice;
		return { ...(record as unknown as IDataObject), assets, missingAssets } as IDataObject;
	}

	private async lookup(assetId: string, itemIndex: number): Promise<Lookup> {
		let lookup = this.lookups.get(assetId);
		if (!lookup) {
			lookup = this.limit(async () => await this.fetch(assetId, itemIndex));
			this.lookups.set(assetId, lookup);
		}
		return await lookup;
	}

	private async fetch(assetId: string, itemIndex: number): Promise<Lookup> {
		const subject = `Managed asset '${assetId}'`;
		try {
			const asset = await this.client.getRecord<Asset>({
				path: paths.asset(assetId),
				subject,
				itemIndex,
			});
			return { asset };
		} catch (error) {
			if (httpStatusOf(error) === RECORD_NOT_FOUND_STATUS) {
				return {
					missing: {
						assetId,
						reason: `${subject} was not found (HTTP ${RECORD_NOT_FOUND_STATUS})`,
					},
				};
			}
			return { failure: error as Error };
		}
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
