/* eslint-disable @n8n/community-nodes/no-restricted-globals */
import { TOKEN_RETRY_POLICY } from '../../../nodes/InvoicingAssets/transport/retry';
import { credentialFor } from '../../harness/testbed';
import { expectNoSecrets, jsonOf, run, useTestbed } from './helpers';

const bed = useTestbed();

const DAY = 24 * 60 * 60 * 1000;
const getInvoices = {
	resource: 'invoice',
	operation: 'get',
	invoiceNumber: { __rl: true, mode: 'number', value: '={{ $json.number }}' },
};

function inputOf(count: number) {
	return bed.testbed.sim.data
		.invoices()
		.slice(0, count)
		.map((invoice) => ({ json: { number: invoice.invoiceNumber } }));
}

function utcDay(offsetDays: number): string {
	return new Date(Date.now() + offsetDays * DAY).toISOString().slice(0, 10);
}

describe('API key expiry hint', () => {
	test('a key expiring within 30 days adds a warning with the date', async () => {
		const { testbed } = bed;
		const expiresOn = utcDay(12);
		const credential = testbed.harness.addCredential(
			credentialFor(testbed.sim, undefined, { keyExpiresOn: `${expiresOn}T00:00:00` }),
		);
		const result = await run(testbed, getInvoices, { input: inputOf(2), credential });

		expect(result.error).toBeUndefined();
		expect(result.items).toHaveLength(2);
		expect(result.hints).toEqual([
			{
				message: expect.stringContaining(`expires on ${expiresOn}`),
				type: 'warning',
				location: 'outputPane',
			},
		]);
		expect(result.hints[0].message).toContain('identity portal');
		expectNoSecrets(testbed, result.hints);
	});

	test('the warning also comes when every item failed', async () => {
		const { testbed } = bed;
		const credential = testbed.harness.addCredential(
			credentialFor(testbed.sim, undefined, { keyExpiresOn: utcDay(3) }),
		);
		const result = await run(testbed, getInvoices, {
			input: [{ json: { number: 'INV-0999999' } }],
			credential,
			continueOnFail: true,
		});
		expect(jsonOf(result)[0].error).toBe("Invoice 'INV-0999999' was not found");
		expect(result.hints.map((hint) => hint.type)).toEqual(['warning']);
	});

	test.each([
		['more than 30 days away', utcDay(45)],
		['not set', ''],
	])('no hint when the expiry is %s', async (_, keyExpiresOn) => {
		const { testbed } = bed;
		const credential = testbed.harness.addCredential(
			credentialFor(testbed.sim, undefined, { keyExpiresOn }),
		);
		const result = await run(testbed, getInvoices, { input: inputOf(1), credential });
		expect(result.error).toBeUndefined();
		expect(result.hints).toEqual([]);
	});
});

describe('one token for a whole run', () => {
	test('an expired stored token is refreshed once for many concurrent items, and persisted', async () => {
		const { testbed } = bed;
		const credential = testbed.harness.addCredential(credentialFor(testbed.sim));
		await run(testbed, getInvoices, { input: inputOf(1), credential });
		const firstToken = testbed.harness.credentials.stored(credential.id ?? '').accessToken;
		testbed.sim.log.reset();

		testbed.sim.clock.advance(61 * 60 * 1000);
		const result = await run(
			testbed,
			{ ...getInvoices, options: { concurrency: 8 } },
			{
				input: inputOf(24),
				credential,
			},
		);

		expect(result.error).toBeUndefined();
		expect(jsonOf(result)).toEqual(testbed.sim.data.invoices().slice(0, 24));
		expect(testbed.sim.log.tokensIssued()).toBe(1);
		expect(testbed.sim.log.count('invoices.get', { status: 200 })).toBe(24);
		// Only the run's first request met the expired token, and only once: the renewal does not
		// send a refused token again. The others waited for the new one.
		expect(testbed.sim.log.count('invoices.get', { status: 401 })).toBe(1);
		const secondToken = testbed.harness.credentials.stored(credential.id ?? '').accessToken;
		expect(secondToken === firstToken).toBe(false);
		expect(testbed.harness.credentials.updates.get(credential.id ?? '')).toBe(2);
	});

	test('a token refused in the middle of a run is refreshed once, not once per item', async () => {
		const { testbed } = bed;
		const credential = testbed.harness.addCredential(credentialFor(testbed.sim));
		await run(testbed, getInvoices, { input: inputOf(1), credential });
		testbed.sim.log.reset();

		// Every answer takes 100 ms. The first item runs alone; as soon as it is answered the token
		// expires, so the next 8, already on their way, all meet a 401.
		testbed.sim.faults.add({ route: 'invoices.get', latencyMs: 100 });
		const running = run(
			testbed,
			{ ...getInvoices, options: { concurrency: 8 } },
			{
				input: inputOf(16),
				credential,
			},
		);
		while (testbed.sim.log.count('invoices.get', { status: 200 }) === 0) {
			await new Promise((resolve) => setTimeout(resolve, 5));
		}
		testbed.sim.clock.advance(61 * 60 * 1000);
		const result = await running;

		expect(result.error).toBeUndefined();
		expect(jsonOf(result)).toEqual(testbed.sim.data.invoices().slice(0, 16));
		expect(testbed.sim.log.count('invoices.get', { status: 401 })).toBeGreaterThanOrEqual(2);
		expect(testbed.sim.log.tokensIssued()).toBe(1);
		expectNoSecrets(testbed, result);
	});
});

describe('the renewal lock', () => {
	test('requests that start while the token is being renewed wait for it: one token request, one credential write', async () => {
		const { testbed } = bed;
		const credential = testbed.harness.addCredential(credentialFor(testbed.sim));
		await run(testbed, getInvoices, { input: inputOf(1), credential });
		const writesBefore = testbed.harness.credentials.updates.get(credential.id ?? '') ?? 0;
		testbed.sim.log.reset();

		// The run's first item, alone, and the second are served at once and answered 500 ms later;
		// the others wait 300 ms before they are served. The token expires just after the second
		// item was served: the next ones are refused and one of them renews (the identity service
		// takes 400 ms), and the second item's worker starts its next item during that renewal.
		testbed.sim.faults.add({
			route: 'invoices.get',
			latencyMs: 500,
			afterHandling: true,
			times: 2,
		});
		testbed.sim.faults.add({ route: 'invoices.get', latencyMs: 300 });
		testbed.sim.faults.add({ route: 'token', latencyMs: 400 });
		const running = run(
			testbed,
			{ ...getInvoices, options: { concurrency: 8 } },
			{ input: inputOf(24), credential },
		);
		while (
			testbed.sim.log.count('invoices.get') < 1 ||
			testbed.sim.log.inFlight('invoices.get') < 8
		) {
			await new Promise((resolve) => setTimeout(resolve, 2));
		}
		testbed.sim.clock.advance(61 * 60 * 1000);
		const result = await running;

		expect(result.error).toBeUndefined();
		expect(jsonOf(result)).toEqual(testbed.sim.data.invoices().slice(0, 24));
		expect(testbed.sim.log.count('token')).toBe(1);
		expect((testbed.harness.credentials.updates.get(credential.id ?? '') ?? 0) - writesBefore).toBe(
			1,
		);
		expect(testbed.sim.log.count('invoices.get', { status: 200 })).toBe(24);
		expectNoSecrets(testbed, result);
	});

	test('a renewal that fails fails the waiting items with its error, without each asking again', async () => {
		const { testbed } = bed;
		const credential = testbed.harness.addCredential(credentialFor(testbed.sim));
		testbed.sim.faults.add({ route: 'token', status: 503, retryAfter: 0 });
		const result = await run(
			testbed,
			{ ...getInvoices, options: { concurrency: 4 } },
			{ input: inputOf(12), credential, continueOnFail: true },
		);

		const errors = jsonOf(result).map((item: { error?: string }) => item.error);
		expect(errors).toEqual(
			Array(12).fill('The identity service refused the token request (HTTP 503)'),
		);
		// One renewal: its own bounded retries, not one series per item.
		expect(testbed.sim.log.count('token')).toBe(TOKEN_RETRY_POLICY.maxAttempts);
		expect(testbed.sim.log.count('invoices.get')).toBe(0);
	});
});
