/* eslint-disable @n8n/community-nodes/no-restricted-globals */
/**
 * Token renewal per node run (transport/tokenRenewal.ts), in process over real HTTPS: a run
 * sends its first request alone and renews one token at a time, on a 401 once, with one resend;
 * runs share nothing. A renewal ends within the deadline of the request it serves.
 */
import type { INodeCredentialsDetails } from 'n8n-workflow';

import { PollingWorkflow } from '../harness/poller';
import { expectNoSecret } from '../harness/secrets';
import { credentialFor, secretsOf } from '../harness/testbed';
import { MAX_ATTEMPTS } from '../../nodes/InvoicingAssets/transport/retry';
import { jsonOf, run, useTestbed } from './action/helpers';

const HOUR = 60 * 60_000;
const getEach = {
	resource: 'invoice',
	operation: 'get',
	invoiceNumber: { __rl: true, mode: 'number', value: '={{ $json.number }}' },
	options: { concurrency: 8 },
};

const bed = useTestbed({ invoices: 30, assets: 5 });

function newCredential(): INodeCredentialsDetails {
	return bed.testbed.harness.addCredential(credentialFor(bed.testbed.sim));
}

/** A credential whose stored token has expired: it was used once, an hour ago. */
async function expiredCredential(): Promise<INodeCredentialsDetails> {
	const credential = newCredential();
	expect((await getInvoices(credential, 1)).error).toBeUndefined();
	bed.testbed.sim.clock.advance(HOUR + 60_000);
	bed.testbed.sim.log.reset();
	return credential;
}

async function getInvoices(
	credential: INodeCredentialsDetails,
	count: number,
	continueOnFail = false,
) {
	const input = bed.testbed.sim.data
		.invoices()
		.slice(0, count)
		.map((invoice) => ({ json: { number: invoice.invoiceNumber } }));
	return await run(bed.testbed, getEach, { credential, input, continueOnFail });
}

function expectEveryInvoice(result: Awaited<ReturnType<typeof getInvoices>>, count: number) {
	expect(result.error).toBeUndefined();
	expect(jsonOf(result)).toEqual(bed.testbed.sim.data.invoices().slice(0, count));
}

test('runs that meet an expired token renew once each: the first request alone, the other items with its token, nothing shared between runs', async () => {
	const { sim, harness } = bed.testbed;
	const credential = await expiredCredential();
	const before = harness.credentials.stored(credential.id ?? '').accessToken;

	const runs = await Promise.all([getInvoices(credential, 24), getInvoices(credential, 24)]);

	for (const result of runs) expectEveryInvoice(result, 24);
	expect(sim.log.tokensIssued()).toBe(2);
	// Only each run's first request met the expired token; the renewal sent it once more.
	expect(sim.log.count('invoices.get', { status: 401 })).toBe(2);
	expect(sim.log.count('invoices.get', { status: 200 })).toBe(48);
	const after = harness.credentials.stored(credential.id ?? '').accessToken;
	expect(after === before).toBe(false);
	expectNoSecret(runs, [...secretsOf(bed.testbed), String(after)], 'the runs');
});

test('a token refused while many requests of a run are on their way is renewed once for the run', async () => {
	const { sim } = bed.testbed;
	const credential = newCredential();
	expect((await getInvoices(credential, 1)).error).toBeUndefined();
	sim.log.reset();
	// Every answer takes 100 ms. The first item runs alone; once it is answered the token expires,
	// so the next 8, already on their way, all meet a 401.
	sim.faults.add({ route: 'invoices.get', latencyMs: 100 });
	const running = getInvoices(credential, 16);
	while (sim.log.count('invoices.get', { status: 200 }) === 0) {
		await new Promise((resolve) => setTimeout(resolve, 5));
	}
	sim.clock.advance(HOUR + 60_000);

	expectEveryInvoice(await running, 16);
	expect(sim.log.count('invoices.get', { status: 401 })).toBeGreaterThanOrEqual(2);
	expect(sim.log.tokensIssued()).toBe(1);
});

test('a renewal that fails fails the run’s waiting items with its error, without each asking again', async () => {
	const { sim } = bed.testbed;
	const credential = await expiredCredential();
	sim.faults.add({ route: 'token', status: 503, retryAfter: 0 });

	const result = await getInvoices(credential, 12, true);

	expect(jsonOf(result).map((item) => item.error)).toEqual(
		Array(12).fill('The identity service refused the token request (HTTP 503)'),
	);
	// One renewal, retried by the one retry loop within its policy: not one series per item.
	expect(sim.log.count('token')).toBe(MAX_ATTEMPTS);
	expect(sim.log.count('invoices.get', { status: 200 })).toBe(0);
});

test('a poll whose token renewal the identity service puts off past its budget (429, Retry-After 45 s) gives the renewal up without waiting, with the identity service’s refusal', async () => {
	const { sim, harness } = bed.testbed;
	// Well below the 45 s asked for, and long enough that no load makes the token request time out.
	const budgetMs = 30_000;
	const polling = new PollingWorkflow(harness, newCredential(), { events: ['*'] }, budgetMs);
	await polling.activate();
	sim.clock.advance(HOUR + 60_000);
	sim.log.reset();
	sim.faults.add({ route: 'token', status: 429, retryAfter: 45 });

	const outcome = await polling.poll();

	// Without the deadline the loop would wait the 45 s (below its 60 s) and ask again; that it gives
	// up at once is proven on a simulated clock (retry.test.ts). n8n 1.x: the trigger's 30 s bound.
	expect('error' in outcome && outcome.error.message).toBe(
		'The identity service refused the token request (HTTP 429)',
	);
	expect(sim.log.count('token')).toBe(1);
}, 90_000);
