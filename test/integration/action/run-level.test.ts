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
