import { type Asset } from '../../../nodes/InvoicingAssets/transport/contract';
import { jsonOf, run, searchList, useTestbed, type Json } from './helpers';

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

	test('an unknown asset is "Managed asset \'X\' was not found"', async () => {
		const result = await run(bed.testbed, getAsset('AST-999999'));
		expect(result.error?.message).toBe("Managed asset 'AST-999999' was not found");
		expect((result.error as Json).httpCode).toBe('404');
	});

	test('an empty ID names the parameter and the item', async () => {
		const result = await run(bed.testbed, getAsset('={{ $json.assetId }}'), {
			input: [{ json: { assetId: ' ' } }],
			continueOnFail: true,
		});
		expect(jsonOf(result)).toEqual([
			{ error: 'The Asset ID is empty [item 0]', details: expect.stringContaining('AST-000123') },
		]);
	});
});

describe('Managed Asset → Get Many', () => {
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

	test('finds by serial number and by ID', async () => {
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
