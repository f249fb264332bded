import { credentialFor } from '../../harness/testbed';
import type { NodeRun } from '../../harness/workflow';
import type { FaultRule } from '../../simulator';
import { expectNoSecrets, jsonOf, pairedIndexes, run, useTestbed, type Json } from './helpers';

const bed = useTestbed();

/** Three invoices, one at a time, so that a fault with `times` hits item 0 and only item 0. */
function invoiceNumbers() {
	return bed.testbed.sim.data
		.invoices()
		.slice(0, 3)
		.map((invoice) => invoice.invoiceNumber);
}

const getEach = {
	resource: 'invoice',
	operation: 'get',
	invoiceNumber: { __rl: true, mode: 'number', value: '={{ $json.number }}' },
	options: { concurrency: 1 },
};

async function runThree(options: {
	continueOnFail: boolean;
	credential?: Json;
	numbers?: string[];
}) {
	const numbers = options.numbers ?? invoiceNumbers();
	return await run(bed.testbed, getEach, {
		input: numbers.map((number) => ({ json: { number } })),
		continueOnFail: options.continueOnFail,
		credential: options.credential,
	});
}

/** A credential that has no token yet, so that token fetches can be counted from zero. */
function freshCredential(client = bed.testbed.sim.defaultClient, overrides = {}) {
	return bed.testbed.harness.addCredential(credentialFor(bed.testbed.sim, client, overrides));
}

function expectItemFailed(result: NodeRun, index: number, message: string) {
	const json = jsonOf(result);
	expect(json[index]).toEqual({ error: message, details: expect.any(String) });
	expect(pairedIndexes(result)).toEqual([0, 1, 2]);
	const stored = bed.testbed.sim.data.invoices();
	for (const [position, entry] of json.entries()) {
		if (position !== index) expect(entry).toEqual(stored[position]);
	}
}

function expectNodeFailed(result: NodeRun, message: string, itemIndex = 0) {
	expect(result.items).toEqual([]);
	expect(result.error?.message).toBe(message);
	expect((result.error as Json).context.itemIndex).toBe(itemIndex);
}

function addFault(rule: Omit<FaultRule, 'route'>) {
	bed.testbed.sim.faults.add({ route: 'invoices.get', ...rule });
}

describe('401: the service refuses the token', () => {
	test('one renewal, one resend, then a clear error for the item', async () => {
		const { testbed } = bed;
		const credential = freshCredential();
		expect((await runThree({ continueOnFail: false, credential })).error).toBeUndefined();
		testbed.sim.log.reset();
		addFault({ status: 401, times: 2 });
		const result = await runThree({ continueOnFail: true, credential });

		expectItemFailed(result, 0, 'The service refused the access token');
		// Exactly one renewal after the first refusal; the other items go with its token.
		expect(testbed.sim.log.tokensIssued()).toBe(1);
		expect(testbed.sim.log.count('invoices.get', { status: 401 })).toBe(2);
		expect(testbed.sim.log.count('invoices.get', { status: 200 })).toBe(2);
		expectNoSecrets(testbed, result);
	});

	test('a sandbox key against the production Base URL: its new token refused, with a hint', async () => {
		const { testbed } = bed;
		const credential = freshCredential(testbed.sim.defaultSandboxClient, {
			baseUrl: testbed.sim.serviceUrl,
		});
		const result = await runThree({ continueOnFail: false, credential });

		expectNodeFailed(result, 'The service refused the access token');
		expect(result.error?.description).toContain('same environment');
		// A token obtained for the request and refused is not renewed again.
		expect(testbed.sim.log.tokensIssued()).toBe(1);
		expect(testbed.sim.log.entries({ route: 'invoices.get' }).map((entry) => entry.status)).toEqual(
			[401],
		);
		expectNoSecrets(testbed, result, [testbed.sim.defaultSandboxClient.clientSecret]);
	});
});

test('403: not retried, and no renewal, with a clear message', async () => {
	const { testbed } = bed;
	addFault({ status: 403, times: 1 });
	const result = await runThree({ continueOnFail: false, credential: freshCredential() });

	expectNodeFailed(result, 'The API key is not allowed to do this');
	expect(testbed.sim.log.count('invoices.get', { status: 403 })).toBe(1);
	// A 403 is not a token problem: the first token, and no renewal.
	expect(testbed.sim.log.tokensIssued()).toBe(1);
	expectNoSecrets(testbed, result);
});

test('404: not retried, and the invoice is named', async () => {
	const numbers = invoiceNumbers();
	numbers[1] = 'INV-0999999';
	const result = await runThree({ continueOnFail: true, numbers });

	expectItemFailed(result, 1, "Invoice 'INV-0999999' was not found");
	expect(bed.testbed.sim.log.count('invoices.get', { status: 404 })).toBe(1);
});

// How long a Retry-After is waited for is proven on a simulated clock (unit/transport/retry.test.ts);
// here, that the answer and its header reach the retry loop through n8n, without timing.
describe('429: the service limits the rate', () => {
	test('a 429 with Retry-After is retried after its wait, and the request succeeds', async () => {
		const { testbed } = bed;
		addFault({ status: 429, retryAfter: 1, times: 1 });
		const result = await runThree({ continueOnFail: false });

		expect(result.error).toBeUndefined();
		expect(jsonOf(result)).toEqual(testbed.sim.data.invoices().slice(0, 3));
		const [limited, retried] = testbed.sim.log.entries({ route: 'invoices.get' });
		expect([limited.status, retried.status]).toEqual([429, 200]);
		expect(retried.params).toEqual(limited.params);
	});

	test('a limit that does not lift ends after a bounded number of attempts, saying how many', async () => {
		const { testbed } = bed;
		addFault({ status: 429, retryAfter: 0, times: 5 });
		const result = await runThree({ continueOnFail: true });

		expectItemFailed(result, 0, 'The service is limiting the request rate');
		const { details } = jsonOf(result)[0];
		expect(details).toContain('Lower the node’s Concurrency option');
		expect(details).toContain('Tried 5 times');
		expect(testbed.sim.log.count('invoices.get', { status: 429 })).toBe(5);
	});
});

describe('503 and Retry-After beyond the limit', () => {
	test('a read answered 503 with Retry-After is retried after its wait', async () => {
		const { testbed } = bed;
		addFault({ status: 503, retryAfter: 1, times: 1 });
		const result = await runThree({ continueOnFail: false });

		expect(result.error).toBeUndefined();
		expect(jsonOf(result)).toEqual(testbed.sim.data.invoices().slice(0, 3));
		const [unavailable, retried] = testbed.sim.log.entries({ route: 'invoices.get' });
		expect([unavailable.status, retried.status]).toEqual([503, 200]);
	});

	// Without Retry-After, or with it lost on the way, the loop would retry after its backoff.
	test.each([
		[429, 'in seconds', () => 3600],
		[503, 'in seconds', () => 3600],
		[429, 'as an HTTP date', () => new Date(Date.now() + 3_600_000).toUTCString()],
	])(
		'a %p asking %s for a wait longer than the node’s limit ends at once',
		async (status, _form, retryAfter) => {
			const { testbed } = bed;
			addFault({ status, retryAfter: retryAfter(), times: 1 });
			const result = await runThree({ continueOnFail: false });

			expect(result.error?.description).not.toContain('Tried');
			expect(testbed.sim.log.count('invoices.get')).toBe(1);
		},
	);
});

describe('500: the service fails', () => {
	test('once: retried, and the item succeeds', async () => {
		const { testbed } = bed;
		addFault({ status: 500, times: 1 });
		const result = await runThree({ continueOnFail: false });

		expect(result.error).toBeUndefined();
		expect(jsonOf(result)).toEqual(testbed.sim.data.invoices().slice(0, 3));
		expect(testbed.sim.log.entries({ route: 'invoices.get' }).map((entry) => entry.status)).toEqual(
			[500, 200, 200, 200],
		);
	});

	test('a lasting fault ends after 5 attempts with n8n’s wording, the service’s message and the attempts', async () => {
		const { testbed } = bed;
		addFault({ status: 500, times: 5 });
		const result = await runThree({ continueOnFail: false });

		expectNodeFailed(result, 'The service was not able to process your request');
		expect(result.error?.description).toContain('Simulated 500 response');
		expect(result.error?.description).toContain('Tried 5 times');
		expect(testbed.sim.log.count('invoices.get', { status: 500 })).toBe(5);
	});

	test('a dropped connection is retried like a fault', async () => {
		const { testbed } = bed;
		addFault({ drop: true, times: 1 });
		const result = await runThree({ continueOnFail: false });
		expect(result.error).toBeUndefined();
		expect(result.items).toHaveLength(3);
		expect(testbed.sim.log.count('invoices.get')).toBe(4);
	});
});

test('a redirect is not followed, so the token goes nowhere else; the error names where it pointed', async () => {
	const { testbed } = bed;
	const elsewhere = `${testbed.sim.serviceUrl}/elsewhere`;
	addFault({ status: 307, headers: { location: elsewhere }, times: 1 });
	const result = await runThree({ continueOnFail: false });

	expectNodeFailed(result, 'The service answered with a redirect (HTTP 307)');
	expect(result.error?.description).toContain(`It points to ${elsewhere}.`);
	expect(testbed.sim.log.count('unknown')).toBe(0);
});

test('Get Many: a failing page fails the item, and the other items still list', async () => {
	const { testbed } = bed;
	bed.testbed.sim.faults.add({ route: 'invoices.list', status: 403, times: 1 });
	const result = await run(
		testbed,
		{ resource: 'invoice', operation: 'getAll', limit: 2, options: { concurrency: 1 } },
		{ input: [{ json: {} }, { json: {} }], continueOnFail: true },
	);
	expect(jsonOf(result)).toEqual([
		{ error: 'The API key is not allowed to do this', details: expect.any(String) },
		...testbed.sim.data.invoices().slice(0, 2),
	]);
	expect(pairedIndexes(result)).toEqual([0, 1, 1]);
});
