/* eslint-disable @n8n/community-nodes/no-restricted-globals */
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
