import { type Asset } from '../../../nodes/InvoicingAssets/transport/contract';
import { summarizeAsset } from '../../../nodes/InvoicingAssets/actions/simplify';
import {
	expectNoSecrets,
	jsonOf,
	pageRequests,
	pairedIndexes,
	run,
	searchList,
	useTestbed,
	type Json,
} from './helpers';

const bed = useTestbed();

const locator = (value: string, mode = 'id') => ({ __rl: true, mode, value });
const getAsset = (value: string, options = {}) => ({
	resource: 'managedAsset',
	operation: 'get',
	assetId: locator(value),
	options,
});
const getMany = (parameters = {}) => ({
	resource: 'managedAsset',
	operation: 'getAll',
	...parameters,
});

const assets = () => bed.testbed.sim.data.assets();
const nth = (index: number): Asset => assets()[index];

describe('Managed Asset → Get', () => {
	test('returns the service’s asset by ID, and in From List mode', async () => {
		const { testbed } = bed;
		const byId = await run(testbed, getAsset(nth(7).assetId));
		const fromList = await run(testbed, {
			...getAsset(''),
			assetId: locator(nth(8).assetId, 'list'),
		});
		expect(jsonOf(byId)).toEqual([nth(7)]);
		expect(jsonOf(fromList)).toEqual([nth(8)]);
	});

	test('an answer that is not a record is a clear error naming the item, never an item', async () => {
		const { testbed } = bed;
		const { assetId } = nth(11);
		testbed.sim.faults.add({ route: 'assets.get', status: 200, body: 'OK', times: 1 });
		const result = await run(testbed, getAsset(assetId), { continueOnFail: true });

		expect(jsonOf(result)).toEqual([
			{
				error: 'The service answered a record request with an unexpected shape',
				details: `Managed asset '${assetId}' came back as text, not as a JSON object. The Data Service’s answer format may have changed; please report this.`,
			},
		]);
	});

	test('Simplify keeps the main fields', async () => {
		const result = await run(bed.testbed, getAsset(nth(9).assetId, { simplify: true }));
		expect(jsonOf(result)).toEqual([summarizeAsset(nth(9))]);
		expect(Object.keys(jsonOf(result)[0])).not.toContain('updatedAt');
	});

	test('the asset IDs an invoice bills can be looked up item by item, in order', async () => {
		const { testbed } = bed;
		const ids = [nth(20).assetId, nth(3).assetId, nth(150).assetId];
		const result = await run(testbed, getAsset('={{ $json.assetId }}'), {
			input: ids.map((assetId) => ({ json: { assetId } })),
		});
		expect(jsonOf(result)).toEqual([nth(20), nth(3), nth(150)]);
		expect(pairedIndexes(result)).toEqual([0, 1, 2]);
	});

	test('an unknown asset is "Managed asset \'X\' was not found"', async () => {
		const result = await run(bed.testbed, getAsset('AST-999999'));
		expect(result.error?.message).toBe("Managed asset 'AST-999999' was not found");
		expect((result.error as Json).httpCode).toBe('404');
	});

	test('an empty ID names the parameter and the item; "a/b" stays one segment', async () => {
		const { testbed } = bed;
		testbed.sim.contract.tolerate('an asset ID outside the contract pattern, sent on purpose', {
			direction: 'request',
			route: 'GET /asset/v1/assets/{assetId}',
		});
		const result = await run(testbed, getAsset('={{ $json.assetId }}'), {
			input: [{ json: { assetId: ' ' } }, { json: { assetId: 'a/b' } }],
			continueOnFail: true,
		});
		expect(jsonOf(result)).toEqual([
			{ error: 'The Asset ID is empty [item 0]', details: expect.stringContaining('AST-000123') },
			{ error: "Managed asset 'a/b' was not found", details: expect.any(String) },
		]);
		expect(testbed.sim.log.entries({ route: 'assets.get' }).map((entry) => entry.path)).toEqual([
			'/asset/v1/assets/a%2Fb',
		]);
	});
});

describe('Managed Asset → Get Many', () => {
	test('Return All reads all 300 assets in 3 pages', async () => {
		const { testbed } = bed;
		const result = await run(testbed, getMany({ returnAll: true }));
		expect(jsonOf(result)).toEqual(assets());
		expect(pageRequests(testbed, 'assets.list')).toEqual([
			{ page: 1, pageSize: 100 },
			{ page: 2, pageSize: 100 },
			{ page: 3, pageSize: 100 },
		]);
	});

	test('Limit 5 asks for 5', async () => {
		const { testbed } = bed;
		const result = await run(testbed, getMany({ limit: 5, options: { simplify: true } }));
		expect(jsonOf(result)).toEqual(assets().slice(0, 5).map(summarizeAsset));
		expect(pageRequests(testbed, 'assets.list')).toEqual([{ page: 1, pageSize: 5 }]);
	});

	test.each([
		['status', (asset: Asset) => asset.status, 'status'],
		['type', (asset: Asset) => asset.type, 'type'],
		['site', (asset: Asset) => asset.site, 'site'],
		['customerNumber', (asset: Asset) => asset.customerNumber, 'customerNumber'],
		['serialNumber', (asset: Asset) => asset.serialNumber, 'serialNumber'],
	] as const)('the %s filter is applied by the service', async (filter, read, queryName) => {
		const { testbed } = bed;
		const sample = assets().find((asset) => read(asset) !== null) as Asset;
		const value = read(sample) as string;
		const expected = assets().filter((asset) => read(asset) === value);

		const result = await run(testbed, getMany({ returnAll: true, filters: { [filter]: value } }));
		expect(result.error).toBeUndefined();
		expect(jsonOf(result)).toEqual(expected);
		expect(testbed.sim.log.entries({ route: 'assets.list' })[0].query[queryName]).toBe(value);
	});

	test('all filters together, from expressions', async () => {
		const { testbed } = bed;
		const sample = assets().find((asset) => asset.site && asset.serialNumber) as Asset;
		const result = await run(
			testbed,
			getMany({
				returnAll: true,
				filters: {
					status: '={{ $json.status }}',
					type: '={{ $json.type }}',
					site: '={{ $json.site }}',
					customerNumber: '={{ $json.customerNumber }}',
					serialNumber: '={{ $json.serialNumber }}',
				},
			}),
			{ input: [{ json: { ...sample } }] },
		);
		expect(jsonOf(result)).toEqual([sample]);
	});

	test('Updated After and Before find the assets changed in a time range, retired ones included', async () => {
		const { testbed } = bed;
		const { sim } = testbed;
		try {
			sim.clock.advance(24 * 60 * 60_000);
			const since = sim.clock
				.now()
				.toISOString()
				.replace(/\.\d{3}Z$/, 'Z');
			const [first, second] = assets().filter((asset) => asset.status !== 'retired');
			const updated = sim.updateAsset(first.assetId).asset;
			sim.clock.advance(60_000);
			const retired = sim.retireAsset(second.assetId).asset;
			expect(updated.site).not.toBe(first.site);

			const changed = await run(
				testbed,
				getMany({ returnAll: true, filters: { updatedAfter: since } }),
			);
			expect(changed.error).toBeUndefined();
			expect(jsonOf(changed)).toEqual([updated, retired]);
			expect(sim.log.entries({ route: 'assets.list' })[0].query).toMatchObject({
				updatedFrom: since,
			});
			const onlyFirst = await run(
				testbed,
				getMany({
					returnAll: true,
					filters: { updatedAfter: since, updatedBefore: updated.updatedAt },
				}),
			);
			expect(jsonOf(onlyFirst)).toEqual([updated]);
			const bad = await run(
				testbed,
				getMany({ filters: { updatedAfter: retired.updatedAt, updatedBefore: since } }),
			);
			expect(bad.error?.message).toBe(
				'The Updated After date is later than the Updated Before date [item 0]',
			);
		} finally {
			sim.seed({});
		}
	});

	test('no match is an empty result', async () => {
		const result = await run(
			bed.testbed,
			getMany({ returnAll: true, filters: { site: 'Atlantis' } }),
		);
		expect(result.error).toBeUndefined();
		expect(result.items).toEqual([]);
	});
});

describe('Managed Asset → From List search', () => {
	test('lists assets described by type, model, site and status', async () => {
		const result = await searchList(bed.testbed, 'searchAssets');
		const asset = nth(0);
		expect(result.results[0]).toEqual({
			name: [
				asset.assetId,
				[asset.type, asset.model].filter(Boolean).join(' '),
				asset.site,
				asset.status,
			]
				.filter(Boolean)
				.join(' · '),
			value: asset.assetId,
		});
		expect(result.results).toHaveLength(100);
		expect(result.paginationToken).toBe('2');
	});

	test('finds by serial number and by exact ID', async () => {
		const { testbed } = bed;
		const target = assets().find((asset) => asset.serialNumber) as Asset;
		const bySerial = await searchList(
			testbed,
			'searchAssets',
			String(target.serialNumber).toLowerCase(),
		);
		expect(bySerial.results.map((entry) => entry.value)).toContain(target.assetId);
		expect(bySerial.paginationToken).toBeUndefined();

		const byId = await searchList(testbed, 'searchAssets', nth(299).assetId);
		expect(byId.results[0].value).toBe(nth(299).assetId);
	});
});

test('no secret appears in outputs or errors', async () => {
	const { testbed } = bed;
	expectNoSecrets(testbed, [
		await run(testbed, getAsset(nth(1).assetId)),
		await run(testbed, getAsset('AST-999999')),
		await run(testbed, getMany({ limit: 2 })),
	]);
});
