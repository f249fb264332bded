import { DateTime } from 'luxon';
import { setGlobalState, type IDataObject } from 'n8n-workflow';

import { DEFAULT_CONCURRENCY } from '../../../nodes/InvoicingAssets/actions/common.descriptions';
import { type Invoice } from '../../../nodes/InvoicingAssets/transport/contract';
import { summarizeInvoice } from '../../../nodes/InvoicingAssets/actions/simplify';
import {
	expectNoSecrets,
	heldAtOnce,
	items,
	jsonOf,
	pageRequests,
	pairedIndexes,
	run,
	searchList,
	useTestbed,
	withEveryRequestAnswered,
	type Json,
} from './helpers';
import { PARAMETER_ISSUES_ARE_NAMED, testNeeding2x } from '../../harness/engine';

const bed = useTestbed();

const locator = (value: string, mode = 'number') => ({ __rl: true, mode, value });
const getInvoice = (value: string, options = {}) => ({
	resource: 'invoice',
	operation: 'get',
	invoiceNumber: locator(value),
	options,
});
const getMany = (parameters = {}) => ({ resource: 'invoice', operation: 'getAll', ...parameters });

/** The service's own record, to compare node output with. */
function stored(invoiceNumber: string): Invoice {
	const invoice = bed.testbed.sim.data.invoice(invoiceNumber);
	if (!invoice) throw new Error(`The simulator has no invoice ${invoiceNumber}`);
	return invoice;
}

function nth(index: number): Invoice {
	return bed.testbed.sim.data.invoices()[index];
}

beforeEach(() => {
	// Tests below that need other counts seed their own; this is the simulator's default data.
	if (bed.testbed.sim.data.invoices().length !== 1050) bed.testbed.sim.seed({ invoices: 1050 });
});

describe('Invoice → Get', () => {
	test('returns the service’s invoice as is, by number', async () => {
		const { testbed } = bed;
		const invoiceNumber = nth(17).invoiceNumber;
		const result = await run(testbed, getInvoice(invoiceNumber));

		expect(result.error).toBeUndefined();
		expect(jsonOf(result)).toEqual([stored(invoiceNumber)]);
		expect(testbed.sim.log.entries({ route: 'invoices.get' }).map((entry) => entry.params)).toEqual(
			[{ invoiceNumber }],
		);
	});

	test.each([
		['text', 'Service temporarily degraded'],
		['a list', [{ invoiceNumber: 'INV-2026-000001' }]],
		['an empty answer', ''],
		['a JSON number', 42],
	])('an answer that is not a record (%s) is a clear error, never an item', async (_came, body) => {
		const { testbed } = bed;
		const invoiceNumber = nth(5).invoiceNumber;
		testbed.sim.faults.add({ route: 'invoices.get', status: 200, body, times: 1 });
		const result = await run(testbed, getInvoice(invoiceNumber));

		expect(result.error?.message).toBe(
			'The service answered a record request with an unexpected shape',
		);
		expect(result.error?.description).toContain(
			`Invoice '${invoiceNumber}' did not come back as a JSON object`,
		);
		expect(result.items).toEqual([]);
	});

	test('"From List" mode and surrounding blanks work the same', async () => {
		const { testbed } = bed;
		const invoiceNumber = nth(3).invoiceNumber;
		const fromList = await run(testbed, {
			...getInvoice(''),
			invoiceNumber: locator(invoiceNumber, 'list'),
		});
		const padded = await run(testbed, getInvoice(`  ${invoiceNumber} `));
		expect(jsonOf(fromList)).toEqual([stored(invoiceNumber)]);
		expect(jsonOf(padded)).toEqual([stored(invoiceNumber)]);
	});

	// What Simplify keeps (the billed asset IDs once each, without nulls) is
	// test/unit/action/simplify.test.ts's; here, that the option gives it.
	test('Simplify gives the simplified invoice', async () => {
		const { testbed } = bed;
		const [first, second] = testbed.sim.data.assets();
		const { invoice } = testbed.sim.issueInvoice({
			lines: [{ assetId: second.assetId }, { assetId: null }, { assetId: first.assetId }],
		});
		const result = await run(testbed, getInvoice(invoice.invoiceNumber, { simplify: true }));

		expect(jsonOf(result)).toEqual([summarizeInvoice(invoice)]);
		expect(jsonOf(result)[0].assetIds).toEqual([second.assetId, first.assetId]);
	});

	test('the invoice number comes from each input item; output order and pairing follow the input', async () => {
		const { testbed } = bed;
		const numbers = [900, 5, 311, 42, 1049, 0, 77, 600, 12, 250].map(
			(index) => nth(index).invoiceNumber,
		);
		// Every other answer is slow, so that answers arrive out of order.
		testbed.sim.faults.add({ route: 'invoices.get', latencyMs: 40, probability: 0.5 });

		const result = await run(
			testbed,
			{ ...getInvoice('={{ $json.number }}'), options: { concurrency: 4 } },
			{ input: numbers.map((number, index) => ({ json: { number, index } })) },
		);

		expect(result.error).toBeUndefined();
		expect(jsonOf(result)).toEqual(numbers.map(stored));
		expect(pairedIndexes(result)).toEqual(numbers.map((_, index) => index));
		expect(testbed.sim.log.count('invoices.get', { status: 200 })).toBe(numbers.length);
		expect(testbed.sim.log.tokensIssued()).toBe(0);
	});

	test('items run concurrently up to the Concurrency option (default 8), one at a time with 1', async () => {
		const { testbed } = bed;
		const input = items(9, (index) => ({ number: nth(index).invoiceNumber }));
		const parameters = (options: IDataObject) => ({
			...getInvoice('={{ $json.number }}'),
			options,
		});

		const peakAt = async (options: IDataObject, expected: number) => {
			testbed.sim.log.reset();
			// The run's first request goes alone (it settles the token); the other 8 can overlap.
			const { result } = await heldAtOnce(
				testbed,
				'invoices.get',
				expected,
				async () => {
					return await run(testbed, parameters(options), { input });
				},
				1,
			);
			expect(result.items).toHaveLength(9);
			return testbed.sim.log.peakInFlight('invoices.get');
		};
		expect(await peakAt({ concurrency: 1 }, 1)).toBe(1);
		expect(await peakAt({ concurrency: 3 }, 3)).toBe(3);
		expect(await peakAt({}, DEFAULT_CONCURRENCY)).toBe(DEFAULT_CONCURRENCY);
	});

	test.each([[0], [33], [2.5], ['many'], ['={{ $json.missing }}']])(
		'a Concurrency of %p is refused with the parameter’s name, before any request',
		async (concurrency) => {
			const { testbed } = bed;
			const result = await run(testbed, {
				...getInvoice(nth(0).invoiceNumber),
				options: { concurrency },
			});
			expect(result.error?.message).toBe(
				'The Concurrency must be a whole number from 1 to 32 [item 0]',
			);
			expect(testbed.sim.log.count('invoices.get')).toBe(0);
		},
	);

	test.each([
		['empty', ''],
		['blank', '   '],
	])(
		'an %s invoice number from an expression names the parameter and the item',
		async (_, value) => {
			const { testbed } = bed;
			const input = [{ json: { number: nth(0).invoiceNumber } }, { json: { number: value } }];
			const parameters = getInvoice('={{ $json.number }}');

			const stopped = await run(testbed, parameters, { input });
			expect(stopped.error?.message).toBe('The Invoice Number is empty [item 1]');
			expect(stopped.error?.description).toContain('e.g. INV-2026-000123');
			expect((stopped.error as Json).context.itemIndex).toBe(1);

			const continued = await run(testbed, parameters, { input, continueOnFail: true });
			expect(jsonOf(continued)).toEqual([
				stored(nth(0).invoiceNumber),
				{
					error: 'The Invoice Number is empty [item 1]',
					details: expect.stringContaining('Invoice Number'),
				},
			]);
			expect(pairedIndexes(continued)).toEqual([0, 1]);
		},
	);

	test('a missing field in the expression counts as empty', async () => {
		const result = await run(bed.testbed, getInvoice('={{ $json.nothing }}'), {
			input: [{ json: {} }],
		});
		expect(result.error?.message).toBe('The Invoice Number is empty [item 0]');
		expect(bed.testbed.sim.log.count('invoices.get')).toBe(0);
	});

	test('".." is refused before any request, since no URL can carry it as a segment', async () => {
		const result = await run(bed.testbed, getInvoice('={{ $json.number }}'), {
			input: [{ json: { number: '..' } }],
		});
		expect(result.error?.message).toBe('The Invoice Number ".." is not valid [item 0]');
		expect(bed.testbed.sim.log.count()).toBe(0);
	});

	test('an unknown invoice gives a 404 naming it', async () => {
		const result = await run(bed.testbed, getInvoice('INV-9999999'));
		expect(result.error?.message).toBe("Invoice 'INV-9999999' was not found");
		expect(result.error?.description).toContain(
			"The service said: Invoice 'INV-9999999' was not found.",
		);
		expect((result.error as Json).httpCode).toBe('404');
	});

	testNeeding2x(PARAMETER_ISSUES_ARE_NAMED)(
		'a literal value in the wrong shape is caught by the editor check before the run',
		async () => {
			await expect(run(bed.testbed, getInvoice('../x'))).rejects.toThrow(
				/Enter an invoice number such as INV-2026-000123/,
			);
			expect(bed.testbed.sim.log.count()).toBe(0);
		},
	);
});

describe('Invoice → Get Many: pages', () => {
	test('an empty result makes one request and no items', async () => {
		const { testbed } = bed;
		const result = await run(
			testbed,
			getMany({ returnAll: true, filters: { customerNumber: 'CUST-99999' } }),
		);
		expect(result.error).toBeUndefined();
		expect(result.items).toEqual([]);
		expect(pageRequests(testbed)).toEqual([{ page: 1, pageSize: 100 }]);
	});

	test.each([
		[100, [{ page: 1, pageSize: 100 }]],
		[
			101,
			[
				{ page: 1, pageSize: 100 },
				{ page: 2, pageSize: 100 },
			],
		],
		[1050, Array.from({ length: 11 }, (_, index) => ({ page: index + 1, pageSize: 100 }))],
	])(
		'Return All over %i invoices: every invoice, with the fewest requests',
		async (count, pages) => {
			const { testbed } = bed;
			testbed.sim.seed({ invoices: count });
			const result = await run(testbed, getMany({ returnAll: true }));

			expect(result.error).toBeUndefined();
			expect(jsonOf(result)).toEqual(testbed.sim.data.invoices());
			expect(result.items).toHaveLength(count);
			expect(pairedIndexes(result).every((index) => index === 0)).toBe(true);
			expect(pageRequests(testbed)).toEqual(pages);
		},
	);

	const fullPages = (count: number) =>
		Array.from({ length: count }, (_, index) => ({ page: index + 1, pageSize: 100 }));
	test.each([
		[5, [{ page: 1, pageSize: 5 }]],
		[50, [{ page: 1, pageSize: 50 }]],
		[100, fullPages(1)],
		// Above a page, full pages cut to the Limit: the fewest requests.
		[137, fullPages(2)],
		[150, fullPages(2)],
		[199, fullPages(2)],
		[250, fullPages(3)],
		[1049, fullPages(11)],
	])('Limit %i: exactly those records, with the fewest list requests', async (limit, pages) => {
		const { testbed } = bed;
		const result = await run(testbed, getMany({ returnAll: false, limit }));

		expect(jsonOf(result)).toEqual(testbed.sim.data.invoices().slice(0, limit));
		expect(pageRequests(testbed)).toEqual(pages);
	});

	test('a Limit above the total stops at the total', async () => {
		const { testbed } = bed;
		testbed.sim.seed({ invoices: 120 });
		const result = await run(testbed, getMany({ limit: 500 }));
		expect(result.items).toHaveLength(120);
		expect(pageRequests(testbed)).toEqual([
			{ page: 1, pageSize: 100 },
			{ page: 2, pageSize: 100 },
		]);
	});

	test('the default is 50 invoices', async () => {
		const result = await run(bed.testbed, getMany());
		expect(jsonOf(result)).toEqual(bed.testbed.sim.data.invoices().slice(0, 50));
	});

	test('a Limit of 0 from an expression is a clear error', async () => {
		const result = await run(bed.testbed, getMany({ limit: '={{ 0 }}' }));
		expect(result.error?.message).toBe('The Limit must be a whole number of at least 1 [item 0]');
		expect(bed.testbed.sim.log.count()).toBe(0);
	});
});

describe('Invoice → Get Many: filters', () => {
	test('Status and Customer Number filter at the service', async () => {
		const { testbed } = bed;
		const customerNumber = nth(10).customerNumber;
		const expected = testbed.sim.data
			.invoices()
			.filter((invoice) => invoice.status === 'paid' && invoice.customerNumber === customerNumber);
		expect(expected.length).toBeGreaterThan(0);

		const result = await run(
			testbed,
			getMany({
				returnAll: true,
				filters: { status: 'paid', customerNumber: ` ${customerNumber} ` },
			}),
		);
		expect(jsonOf(result)).toEqual(expected);
		expect(testbed.sim.log.entries({ route: 'invoices.list' })[0].query).toMatchObject({
			status: 'paid',
			customerNumber,
		});
	});

	test('Issued After and Before go to the service as UTC timestamps, from an offset and a DateTime, with every page', async () => {
		const { testbed } = bed;
		const from = nth(200).issueDate;
		const to = nth(450).issueDate;
		const fromWithOffset = DateTime.fromISO(from, { zone: 'UTC+2' }).toISO({
			suppressMilliseconds: true,
		});
		expect(fromWithOffset).toMatch(/\+02:00$/);

		const result = await run(
			testbed,
			getMany({
				returnAll: true,
				filters: { issuedAfter: fromWithOffset, issuedBefore: `={{ DateTime.fromISO('${to}') }}` },
			}),
		);

		expect(result.error).toBeUndefined();
		const expected = testbed.sim.data
			.invoices()
			.filter((invoice) => invoice.issueDate >= from && invoice.issueDate <= to);
		expect(jsonOf(result)).toEqual(expected);
		// More than two pages, each asked for with the filters: none reads past the range.
		expect(expected.length).toBeGreaterThan(200);
		const pages = testbed.sim.log.entries({ route: 'invoices.list' });
		expect(pages.length).toBeGreaterThanOrEqual(3);
		for (const page of pages) {
			expect(page.query).toMatchObject({ issuedFrom: from, issuedTo: to });
		}
	});

	test('a date without a zone is read in the workflow’s time zone', async () => {
		const { testbed } = bed;
		setGlobalState({ defaultTimezone: 'Asia/Kolkata' });
		try {
			await run(
				testbed,
				getMany({
					limit: 1,
					filters: { issuedAfter: '2025-01-01', issuedBefore: '2025-01-31T18:00' },
				}),
			);
		} finally {
			setGlobalState({ defaultTimezone: 'America/New_York' });
		}
		expect(testbed.sim.log.entries({ route: 'invoices.list' })[0].query).toMatchObject({
			issuedFrom: '2024-12-31T18:30:00Z',
			issuedTo: '2025-01-31T12:30:00Z',
		});
	});

	test('a bad date names the filter and the item, and sends nothing', async () => {
		const { testbed } = bed;
		const result = await run(testbed, getMany({ filters: { issuedAfter: '={{ $json.since }}' } }), {
			input: [{ json: { since: '2025-01-01' } }, { json: { since: 'last Tuesday' } }],
			continueOnFail: true,
		});
		expect(jsonOf(result).at(-1)).toEqual({
			error: 'The Issued After is not a valid date [item 1]',
			details: expect.stringContaining('2026-03-31'),
		});
		expect(pairedIndexes(result).at(-1)).toBe(1);
		expect(testbed.sim.log.count('invoices.list')).toBe(1);
	});

	test('Updated After and Before find the invoices changed in a time range, paid ones included', async () => {
		const { testbed } = bed;
		const { sim } = testbed;
		try {
			sim.clock.advance(24 * 60 * 60_000);
			const since = sim.clock.now();
			const paid = [nth(1000), nth(1010), nth(1020)]
				.filter((invoice) => invoice.status === 'issued' || invoice.status === 'overdue')
				.map((invoice) => sim.payInvoice(invoice.invoiceNumber).invoice);
			sim.clock.advance(60_000);
			const issued = sim.issueInvoice().invoice;
			expect(paid.length).toBeGreaterThan(0);
			const sinceText = since.toISOString().replace(/\.\d{3}Z$/, 'Z');

			const changed = await run(
				testbed,
				getMany({ returnAll: true, filters: { updatedAfter: sinceText } }),
			);
			expect(changed.error).toBeUndefined();
			expect(jsonOf(changed)).toEqual([...paid, issued]);
			expect(sim.log.entries({ route: 'invoices.list' })[0].query).toMatchObject({
				updatedFrom: sinceText,
			});

			const beforeIssue = await run(
				testbed,
				getMany({
					returnAll: true,
					filters: { updatedAfter: sinceText, updatedBefore: paid.at(-1)?.updatedAt },
				}),
			);
			expect(jsonOf(beforeIssue)).toEqual(paid);
		} finally {
			sim.seed({ invoices: 1050 });
		}
	});

	test('Updated After later than Updated Before is refused before any request', async () => {
		const result = await run(
			bed.testbed,
			getMany({
				filters: { updatedAfter: '2025-06-01T00:00:00Z', updatedBefore: '2025-01-01T00:00:00Z' },
			}),
		);
		expect(result.error?.message).toBe(
			'The Updated After date is later than the Updated Before date [item 0]',
		);
		expect(bed.testbed.sim.log.count()).toBe(0);
	});

	test('Issued After later than Issued Before is refused before any request', async () => {
		const result = await run(
			bed.testbed,
			getMany({
				filters: { issuedAfter: '2025-06-01T00:00:00Z', issuedBefore: '2025-01-01T00:00:00Z' },
			}),
		);
		expect(result.error?.message).toBe(
			'The Issued After date is later than the Issued Before date [item 0]',
		);
		expect(bed.testbed.sim.log.count()).toBe(0);
	});

	test('an unknown Status from an expression is refused with the choices', async () => {
		const result = await run(bed.testbed, getMany({ filters: { status: '={{ "open" }}' } }));
		expect(result.error?.message).toBe('The Status "open" is not one of the known values [item 0]');
		expect(result.error?.description).toBe('Choose one of: issued, paid, overdue, cancelled.');
	});

	test('several input items each get their own list, in order, with Simplify', async () => {
		const { testbed } = bed;
		const customers = [nth(1).customerNumber, nth(500).customerNumber, 'CUST-99999'];
		const result = await run(
			testbed,
			getMany({
				returnAll: true,
				filters: { customerNumber: '={{ $json.customer }}' },
				options: { simplify: true },
			}),
			{ input: customers.map((customer) => ({ json: { customer } })) },
		);
		const expected = customers.flatMap((customer, index) =>
			testbed.sim.data
				.invoices()
				.filter((invoice) => invoice.customerNumber === customer)
				.map((invoice) => ({ json: summarizeInvoice(invoice), index })),
		);
		expect(jsonOf(result)).toEqual(expected.map((entry) => entry.json));
		expect(pairedIndexes(result)).toEqual(expected.map((entry) => entry.index));
	});
});

describe('Invoice → From List search', () => {
	test('without a filter: the first 100 invoices, described, and a token for more', async () => {
		const { testbed } = bed;
		const first = await searchList(testbed, 'searchInvoices');
		expect(first.results).toHaveLength(100);
		const invoice = nth(0);
		expect(first.results[0]).toEqual({
			name: `${invoice.invoiceNumber} · ${invoice.customerNumber} · ${invoice.totalAmount.toFixed(2)} ${invoice.currency} · ${invoice.status}`,
			value: invoice.invoiceNumber,
		});
		expect(first.paginationToken).toBe('2');

		const last = await searchList(testbed, 'searchInvoices', '', '11');
		expect(last.results.map((entry) => entry.value)).toEqual(
			testbed.sim.data
				.invoices()
				.slice(1000)
				.map((entry) => entry.invoiceNumber),
		);
		expect(last.paginationToken).toBeUndefined();
	});

	test('a filter matches invoice and customer numbers, case-insensitively, a few pages at a time', async () => {
		const { testbed } = bed;
		const result = await searchList(testbed, 'searchInvoices', 'inv-000004');
		const expected = testbed.sim.data
			.invoices()
			.slice(0, 500)
			.filter((invoice) => invoice.invoiceNumber.toLowerCase().includes('inv-000004'))
			.map((invoice) => invoice.invoiceNumber);
		expect(result.results.map((entry) => entry.value)).toEqual(expected);
		expect(result.paginationToken).toBe('6');
		expect(testbed.sim.log.count('invoices.list')).toBe(5);

		const customer = nth(700).customerNumber;
		const byCustomer = await searchList(testbed, 'searchInvoices', customer, '6');
		expect(byCustomer.results.length).toBeGreaterThan(0);
		for (const entry of byCustomer.results)
			expect(stored(String(entry.value)).customerNumber).toBe(customer);
	});

	test('a filter that matches nothing in the first pages reads on, so the editor never shows an empty list that has more', async () => {
		const { testbed } = bed;
		// Invoice numbers INV-0000800 to INV-0000899 are the first to contain this: on page 8 of 100.
		const filter = 'inv-00008';
		const invoices = testbed.sim.data.invoices();
		const first = invoices.findIndex((invoice) =>
			invoice.invoiceNumber.toLowerCase().includes(filter),
		);
		expect(first).toBeGreaterThanOrEqual(500);
		const pageOfMatch = Math.floor(first / 100) + 1;

		const result = await searchList(testbed, 'searchInvoices', filter);
		expect(result.results[0]?.value).toBe(invoices[first].invoiceNumber);
		// It stops at the first page with a match, and offers the next for "load more".
		expect(testbed.sim.log.count('invoices.list')).toBe(pageOfMatch);
		expect(result.paginationToken).toBe(String(pageOfMatch + 1));
	});

	test.each([
		['without a filter, the first page', '', 0],
		['with a filter, the third page', 'inv-', 2],
	])(
		'a page that is not a page of records is an error, never an empty list (%s)',
		async (_name, filter, skip) => {
			const { testbed } = bed;
			testbed.sim.faults.add({
				route: 'invoices.list',
				status: 200,
				body: 'Service temporarily degraded',
				skip,
				times: 1,
			});
			// The pages after it that were on their way finish here, not in the next test.
			const { outcome } = await withEveryRequestAnswered(
				testbed,
				'invoices.list',
				async () => await searchList(testbed, 'searchInvoices', filter).catch((error) => error),
			);
			expect(outcome).toMatchObject({
				message: 'The service answered a list request with an unexpected shape',
			});
		},
	);
});

test('no secret appears in any output or error of this file’s kind of runs', async () => {
	const { testbed } = bed;
	const good = await run(testbed, getInvoice(nth(1).invoiceNumber));
	const bad = await run(testbed, getInvoice('INV-9999999'));
	const listed = await run(testbed, getMany({ limit: 3 }));
	expectNoSecrets(testbed, [good, bad, listed]);
});
