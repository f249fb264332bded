/**
 * Values that go into the request URL, as the reliability fuzzing found them (test/reliability):
 * whole characters arrive intact, half of one is refused before any request (URL encoders throw
 * on it or silently change it), so is a control character in an identifier (a broken
 * expression), and an address too long for the service is explained.
 */
import type { IDataObject } from 'n8n-workflow';

import { run as runNode, useTestbed } from './helpers';

const bed = useTestbed({ invoices: 20, assets: 10 });

// Values come from the input item, as from an expression: literal ones would meet the editor's
// format check of each parameter first.
const VALUE = '={{ $json.value }}';
const locator = (mode: string) => ({ __rl: true, mode, value: VALUE });
const invoiceGet = { resource: 'invoice', operation: 'get', invoiceNumber: locator('number') };
const run = (parameters: IDataObject, value: string) =>
	runNode(bed.testbed, parameters, { input: [{ json: { value } }] });

describe('values in the URL', () => {
	test('emoji, slashes, percent signs and spaces reach the service intact', async () => {
		const { testbed } = bed;
		testbed.sim.contract.tolerate('invoice numbers outside the contract pattern, sent on purpose', {
			direction: 'request',
			route: 'GET /invoice/v1/invoices/{invoiceNumber}',
		});
		const values = ['😀/%2F?#', 'a\u00a0b\u2028c', '..x', 'é e\u0301 ß'];
		for (const value of values) {
			const result = await run(invoiceGet, value);
			expect(result.error?.message).toBe(`Invoice '${value}' was not found`);
		}
		expect(
			testbed.sim.log.entries({ route: 'invoices.get' }).map((entry) => entry.params.invoiceNumber),
		).toEqual(values);
		expect(testbed.sim.log.count('unknown')).toBe(0);
	});

	test.each([
		['Invoice Get, a lone high surrogate', invoiceGet, 'INV-\ud800', 'Invoice Number'],
		[
			'Managed Asset Get, a lone low surrogate',
			{ resource: 'managedAsset', operation: 'get', assetId: locator('id') },
			'\udc00AST',
			'Asset ID',
		],
		[
			'Invoice Get Many, a customer number cut in the middle of an emoji',
			{
				resource: 'invoice',
				operation: 'getAll',
				returnAll: false,
				limit: 1,
				filters: { customerNumber: VALUE },
			},
			'CUST-\ud83d',
			'Customer Number',
		],
		[
			'Managed Asset Get Many, a site with half a character',
			{
				resource: 'managedAsset',
				operation: 'getAll',
				returnAll: false,
				limit: 1,
				filters: { site: VALUE },
			},
			'\ud8001',
			'Site',
		],
		[
			'Subscription Delete, half a character',
			{ resource: 'subscription', operation: 'delete', subscriptionId: locator('id') },
			'x\udfff',
			'Subscription',
		],
	])(
		'%s is refused before any request, naming the parameter',
		async (_label, parameters, value, name) => {
			const { testbed } = bed;
			const result = await run(parameters, value);
			expect(result.error?.name).toBe('NodeOperationError');
			expect(result.error?.message).toBe(`The ${name} contains a broken character [item 0]`);
			expect(result.error?.description).toMatch(/unpaired UTF-16 surrogate/);
			expect(testbed.sim.log.entries().filter((entry) => entry.route !== 'token')).toEqual([]);
		},
	);

	// In an identifier, a control character means a broken expression (docs/troubleshooting.md).
	test.each([
		['Invoice Get, a line break', invoiceGet, 'INV-2026\n000123', 'Invoice Number'],
		[
			'Managed Asset Get, NUL',
			{ resource: 'managedAsset', operation: 'get', assetId: locator('id') },
			'AST\u00001',
			'Asset ID',
		],
		[
			'Subscription Delete, DEL',
			{ resource: 'subscription', operation: 'delete', subscriptionId: locator('id') },
			'3f2c9a7e-1b4d-4c8e-9f0a-2d6b8e1c5a47\u007f',
			'Subscription',
		],
		['Invoice Get, a C1 control', invoiceGet, 'INV\u00851', 'Invoice Number'],
	])(
		'%s is refused before any request, naming the parameter',
		async (_label, parameters, value, name) => {
			const { testbed } = bed;
			const result = await run(parameters, value);
			expect(result.error?.name).toBe('NodeOperationError');
			expect(result.error?.message).toBe(`The ${name} contains a control character [item 0]`);
			expect(result.error?.description).toMatch(/broken expression/);
			expect(testbed.sim.log.entries().filter((entry) => entry.route !== 'token')).toEqual([]);
		},
	);

	test('an address too long for the service is explained', async () => {
		const result = await run(invoiceGet, 'é'.repeat(5000));
		expect(result.error?.name).toBe('NodeApiError');
		expect(result.error?.message).toBe('The request’s address is too long for the service');
		expect(result.error?.description).toMatch(/too long: check the node parameters/);
	});
});
