import type {
	ILoadOptionsFunctions,
	INodeListSearchItems,
	INodeListSearchResult,
} from 'n8n-workflow';

import { ServiceClient } from '../transport';
import { FIRST_PAGE, MAX_PAGE_SIZE, paths, type Asset, type Invoice } from '../transport/contract';
import { readPages } from '../transport/pageReader';
import { redactDeliveryKey } from '../transport/notificationUrl';

export async function searchSubscriptions(
	this: ILoadOptionsFunctions,
	filter?: string,
): Promise<INodeListSearchResult> {
	const client = new ServiceClient(this);
	const subscriptions = await client.listSubscriptions();
	const needle = filter?.trim().toLowerCase() ?? '';
	return {
		results: subscriptions
			.map((subscription) => ({
				name: `${subscription.description ?? 'Subscription'} → ${redactDeliveryKey(subscription.notificationUrl)}`,
				value: subscription.id,
			}))
			.filter(
				(entry) =>
					needle === '' ||
					entry.name.toLowerCase().includes(needle) ||
					entry.value.toLowerCase().includes(needle),
			),
	};
}

export async function searchInvoices(
	this: ILoadOptionsFunctions,
	filter?: string,
	paginationToken?: string,
): Promise<INodeListSearchResult> {
	return await searchList<Invoice>(
		this,
		{
			listPath: paths.invoices,
			idOf: (invoice) => invoice.invoiceNumber,
			searchText: (invoice) => [invoice.invoiceNumber, invoice.customerNumber],
			nameOf: (invoice) =>
				[
					invoice.invoiceNumber,
					invoice.customerNumber,
					typeof invoice.totalAmount === 'number'
						? `${invoice.totalAmount.toFixed(2)} ${invoice.currency ?? ''}`.trim()
						: undefined,
					invoice.status,
				]
					.filter(Boolean)
					.join(' · '),
		},
		filter,
		paginationToken,
	);
}

export async function searchAssets(
	this: ILoadOptionsFunctions,
	filter?: string,
	paginationToken?: string,
): Promise<INodeListSearchResult> {
	return await searchList<Asset>(
		this,
		{
			listPath: paths.assets,
			idOf: (asset) => asset.assetId,
			searchText: (asset) => [asset.assetId, asset.serialNumber, asset.customerNumber],
			nameOf: (asset) =>
				[
					asset.assetId,
					[asset.type, asset.model].filter(Boolean).join(' '),
					asset.site,
					asset.status,
				]
					.filter(Boolean)
					.join(' · '),
		},
		filter,
		paginationToken,
	);
}

interface ListSource<T> {
	listPath: string;
	idOf: (record: T) => string;
	/** What the filter is matched against (case-insensitive, anywhere in the text). */
	searchText: (record: T) => Array<string | null | undefined>;
	nameOf: (record: T) => string;
}

/** Pages read per call while filtering; "load more" continues from there. */
const PAGES_PER_SEARCH = 5;
/** While nothing matched yet, reading goes on up to this many pages: an empty list offers no "load more". */
const PAGES_PER_SEARCH_WITHOUT_MATCH = 20;

/** The list endpoints have no text search, so the filter is applied here, a few pages at a time. */
async function searchList<T>(
	context: ILoadOptionsFunctions,
	source: ListSource<T>,
	filter?: string,
	paginationToken?: string,
): Promise<INodeListSearchResult> {
	const client = new ServiceClient(context);
	const needle = filter?.trim().toLowerCase() ?? '';
	const firstPage = Math.max(FIRST_PAGE, Number(paginationToken) || FIRST_PAGE);
	const found: T[] = [];
	const matches = (record: T) =>
		source
			.searchText(record)
			.some((text) => typeof text === 'string' && text.toLowerCase().includes(needle));
	// The page "load more" goes on from; undefined once the list's last page was read.
	let nextPage: number | undefined = firstPage;
	const readOn = async (pages: number, untilMatch: boolean) => {
		const pagesRead = readPages<T>(client, {
			path: source.listPath,
			startPage: nextPage,
			limit: pages * MAX_PAGE_SIZE,
			// Reading until the first match asks for one page at a time, so that none is wasted.
			pagesInFlight: untilMatch ? 1 : undefined,
		});
		for await (const page of pagesRead) {
			found.push(...page.records.filter(matches));
			nextPage = page.endOfList ? undefined : page.page + 1;
			if (untilMatch && found.length > 0) break;
		}
	};
	await readOn(needle === '' ? 1 : PAGES_PER_SEARCH, false);
	if (needle !== '' && found.length === 0 && nextPage !== undefined) {
		await readOn(PAGES_PER_SEARCH_WITHOUT_MATCH - PAGES_PER_SEARCH, true);
	}

	const seen = new Set<string>();
	const results: INodeListSearchItems[] = [];
	for (const record of found) {
		const id = source.idOf(record);
		if (typeof id !== 'string' || seen.has(id)) continue;
		seen.add(id);
		results.push({ name: source.nameOf(record), value: id });
	}
	return { results, paginationToken: nextPage === undefined ? undefined : String(nextPage) };
}
