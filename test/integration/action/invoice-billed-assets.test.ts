/**
 * Invoice Get and Get Many with the option Include Billed Assets, against the simulator over HTTPS:
 * the assets of the invoice's lines, once each and in line order, fetched once per run however
 * many invoices bill them, within the Concurrency bound; a deleted asset is null with its reason.
 */
import type { IDataObject } from 'n8n-workflow';

import type { Asset, Invoice } from '../../../nodes/InvoicingAssets/transport/contract';
import { summarizeAsset, summarizeInvoice } from '../../../nodes/InvoicingAssets/actions/simplify';
import {
	expectNoSecrets,
	heldAtOnce,
	jsonOf,
	pairedIndexes,
	run,
	useTestbed,
	type Json,
} from './helpers';

const SEED = { invoices: 40, assets: 30 };
const bed = useTestbed(SEED);

beforeEach(() => {
	bed.testbed.sim.seed(SEED);
});

const getInvoice = (options: IDataObject = {}) => ({
	resource: 'invoice',
	operation: 'get',
	invoiceNumber: { __rl: true, mode: 'number', value: '={{ $json.number }}' },
	options: { includeBilledAssets: true, ...options },
});

const getMany = (customerNumber: string, options: IDataObject = {}) => ({
	resource: 'invoice',
	operation: 'getAll',
	returnAll: true,
	filters: { customerNumber },
	options: { includeBilledAssets: true, ...options },
});

function asset(index: number): Asset {
	return bed.testbed.sim.data.assets()[index];
}

function storedAsset(assetId: string): Asset {
	const found = bed.testbed.sim.data.asset(assetId);
	if (!found) throw new Error(`The simulator has no asset ${assetId}`);
	return found;
}

/** Issues an invoice whose lines bill these assets in this order; null is a line without an asset. */
function issue(assetIds: Array<string | null>, customerNumber?: string): Invoice {
	return bed.testbed.sim.issueInvoice({
		customerNumber,
		lines: assetIds.map((assetId) => ({ assetId, description: assetId ? null : 'Service fee' })),
	}).invoice;
}

const inputFor = (invoices: Invoice[]) =>
	invoices.map((invoice) => ({ json: { number: invoice.invoiceNumber } }));

/** The asset IDs of the run's asset requests, sorted. */
function assetRequests(status?: number): string[] {
	return bed.testbed.sim.log
		.entries({ route: 'assets.get', status })
		.map((entry) => entry.params.assetId)
		.sort();
}

describe('Invoice → Get with Include Billed Assets', () => {
	test('each invoice gains its billed assets in line order, once each; an asset several invoices bill is fetched once per run', async () => {
		const { testbed } = bed;
		const [a, b, c, d] = [0, 1, 2, 3].map((index) => asset(index).assetId);
		const invoices = [issue([b, null, a, b]), issue([a, c]), issue([c, d, a])];
		const input = inputFor(invoices);

		const result = await run(testbed, getInvoice(), { input });

		expect(result.error).toBeUndefined();
		expect(jsonOf(result)).toEqual([
			{ ...invoices[0], assets: [b, a].map(storedAsset), missingAssets: [] },
			{ ...invoices[1], assets: [a, c].map(storedAsset), missingAssets: [] },
			{ ...invoices[2], assets: [c, d, a].map(storedAsset), missingAssets: [] },
		]);
		expect(pairedIndexes(result)).toEqual([0, 1, 2]);
		expect(assetRequests()).toEqual([a, b, c, d].sort());
		expectNoSecrets(testbed, result.items);

		// Per run, not per process: the next run asks the service again and sees today's assets.
		await run(testbed, getInvoice(), { input });
		expect(testbed.sim.log.count('assets.get')).toBe(8);

		// Off (the default), the invoices come as the service sends them, without asset requests.
		testbed.sim.log.reset();
		const without = await run(testbed, { ...getInvoice(), options: {} }, { input });
		expect(jsonOf(without)).toEqual(invoices);
		expect(testbed.sim.log.count('assets.get')).toBe(0);
	});

	test('an asset that no longer exists is null with its reason, asked for once; the invoices do not fail', async () => {
		const { testbed } = bed;
		const [a, gone, b] = [4, 5, 6].map((index) => asset(index).assetId);
		const invoices = [issue([a, gone, b]), issue([gone])];
		expect(testbed.sim.deleteAsset(gone)).toBe(true);

		const result = await run(testbed, getInvoice(), { input: inputFor(invoices) });

		expect(result.error).toBeUndefined();
		const missing = { assetId: gone, reason: `Managed asset '${gone}' was not found (HTTP 404)` };
		expect(jsonOf(result)).toEqual([
			{ ...invoices[0], assets: [storedAsset(a), null, storedAsset(b)], missingAssets: [missing] },
			{ ...invoices[1], assets: [null], missingAssets: [missing] },
		]);
		expect(assetRequests(404)).toEqual([gone]);
		expect(assetRequests()).toEqual([a, gone, b].sort());
	});

	test('an asset answer that is not a record fails the invoices that bill it, never an asset of text', async () => {
		const { testbed } = bed;
		const a = asset(9).assetId;
		const invoices = [issue([a]), issue([null, a])];
		testbed.sim.faults.add({
			route: 'assets.get',
			status: 200,
			body: 'Service temporarily degraded',
			times: 1,
		});

		const result = await run(testbed, getInvoice(), {
			input: inputFor(invoices),
			continueOnFail: true,
		});

		const failed = jsonOf(result) as Array<{ error?: string; details?: string }>;
		expect(failed).toHaveLength(2);
		for (const item of failed) {
			expect(item.error).toBe(
				`The billed asset '${a}' could not be fetched: The service answered a record request with an unexpected shape`,
			);
			expect(item.details).toContain(`Managed asset '${a}' did not come back as a JSON object`);
		}
	});

	test('Simplify: the main invoice fields, assetIds, and the assets in the same order, simplified', async () => {
		const { testbed } = bed;
		const [a, b] = [7, 8].map((index) => asset(index).assetId);
		const invoice = issue([b, null, a]);

		const result = await run(testbed, getInvoice({ simplify: true }), {
			input: inputFor([invoice]),
		});

		expect(jsonOf(result)).toEqual([
			{
				...summarizeInvoice(invoice),
				assets: [b, a].map((id) => summarizeAsset(storedAsset(id))),
				missingAssets: [],
			},
		]);
		expect(jsonOf(result)[0].assetIds).toEqual([b, a]);
	});

	test('the asset requests of all items together stay within the Concurrency option', async () => {
		const { testbed } = bed;
		// Four invoices, three assets each, none shared: twelve asset requests, each slowed down.
		const invoices = [0, 1, 2, 3].map((group) =>
			issue([0, 1, 2].map((offset) => asset(10 + group * 3 + offset).assetId)),
		);
		const peakAt = async (concurrency: number) => {
			testbed.sim.log.reset();
			const { result } = await heldAtOnce(testbed, 'assets.get', concurrency, async () => {
				return await run(testbed, getInvoice({ concurrency }), { input: inputFor(invoices) });
			});
			expect(result.error).toBeUndefined();
			expect(jsonOf(result).flatMap((invoice: Json) => invoice.assets)).toHaveLength(12);
			expect(testbed.sim.log.count('assets.get')).toBe(12);
			return testbed.sim.log.peakInFlight('assets.get');
		};
		expect(await peakAt(2)).toBe(2);
		expect(await peakAt(5)).toBe(5);
	});

	test('any other failure of an asset request fails the items whose invoice bills it, naming the asset; Continue On Fail keeps the rest', async () => {
		const { testbed } = bed;
		const [a, b] = [20, 21].map((index) => asset(index).assetId);
		const invoices = [issue([a]), issue([b]), issue([b, a])];
		const input = inputFor(invoices);
		const refuseAssetA = () =>
			testbed.sim.faults.add({ route: 'assets.get', status: 403, times: 1 });

		// Concurrency 1: item 0 asks for asset A first, and that request is refused.
		refuseAssetA();
		const stopped = await run(testbed, getInvoice({ concurrency: 1 }), { input });
		expect(stopped.error?.message).toBe(
			`The billed asset '${a}' could not be fetched: The API key is not allowed to do this`,
		);
		expect(stopped.error?.description).toContain('Customer Admin');
		expect((stopped.error as Json).context.itemIndex).toBe(0);
		expect((stopped.error as Json).httpCode).toBe('403');

		testbed.sim.log.reset();
		refuseAssetA();
		const continued = await run(testbed, getInvoice({ concurrency: 1 }), {
			input,
			continueOnFail: true,
		});
		const failure = {
			error: `The billed asset '${a}' could not be fetched: The API key is not allowed to do this`,
			details: expect.stringContaining('Include Billed Assets'),
		};
		expect(jsonOf(continued)).toEqual([
			failure,
			{ ...invoices[1], assets: [storedAsset(b)], missingAssets: [] },
			failure,
		]);
		expect(pairedIndexes(continued)).toEqual([0, 1, 2]);
		// The refused asset was asked for once; the third item shares that answer.
		expect(assetRequests()).toEqual([a, b].sort());
	});
});

describe('Invoice → Get Many with Include Billed Assets', () => {
	test('every listed invoice gains its assets; each asset is fetched once across the list and the input items', async () => {
		const { testbed } = bed;
		const customerNumber = 'CUST-77777';
		const [a, b, c] = [24, 25, 26].map((index) => asset(index).assetId);
		const invoices = [
			issue([a, b], customerNumber),
			issue([b], customerNumber),
			issue([null], customerNumber),
			issue([c, a, b], customerNumber),
		];

		const result = await run(testbed, getMany(customerNumber), {
			input: [{ json: { batch: 1 } }, { json: { batch: 2 } }],
		});

		expect(result.error).toBeUndefined();
		const expected = [
			{ ...invoices[0], assets: [a, b].map(storedAsset), missingAssets: [] },
			{ ...invoices[1], assets: [b].map(storedAsset), missingAssets: [] },
			{ ...invoices[2], assets: [], missingAssets: [] },
			{ ...invoices[3], assets: [c, a, b].map(storedAsset), missingAssets: [] },
		];
		expect(jsonOf(result)).toEqual([...expected, ...expected]);
		expect(pairedIndexes(result)).toEqual([0, 0, 0, 0, 1, 1, 1, 1]);
		expect(testbed.sim.log.count('invoices.list')).toBe(2);
		expect(assetRequests()).toEqual([a, b, c].sort());
	});
});
