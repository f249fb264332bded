/* eslint-disable @n8n/community-nodes/no-restricted-imports */
/**
 * Identity-service faults during three simulated hours of token renewals, in process (n8n-core's
 * engine, the simulator over HTTPS), apart from soak.ts: many credentials (so many token
 * requests), 10 % of the token requests answered 503 or 429 (Retry-After 1 s), left without an
 * answer past the 30 s timeout, or dropped; every item is checked against the simulator's record
 * (0 failed items).
 */
import { isDeepStrictEqual } from 'node:util';

import type { INodeCredentialsDetails } from 'n8n-workflow';

import { credentialFor, startTestbed } from '../harness/testbed';
import { exclusiveFaults } from './action-faults';
import { count } from './report';
import { printable, trackTestbed, type RunContext } from './support';

const MINUTE = 60_000;

export async function identityFaultsCheck(ctx: RunContext) {
	const ITEM = '5 token';
	const credentials = ctx.ci ? 20 : 40;
	const stepMinutes = 10;
	const hours = 3;
	const testbed = trackTestbed(await startTestbed({ invoices: 50, assets: 5 }));
	const { sim, harness } = testbed;
	try {
		const route = 'token' as const;
		for (const rule of exclusiveFaults([
			{ route, status: 503, share: 0.025 },
			{ route, status: 429, retryAfter: 1, share: 0.025 },
			{ route, latencyMs: 31_000, share: 0.025 },
			{ route, drop: true, share: 0.025 },
		])) {
			sim.faults.add(rule);
		}
		const kinds = ['503', '429', 'timeout', 'dropped'];
		const keys: INodeCredentialsDetails[] = Array.from({ length: credentials }, () =>
			harness.addCredential(credentialFor(sim)),
		);
		const numbers = sim.data.invoices().map((invoice) => invoice.invoiceNumber);
		ctx.say(
			`  token faults: ${credentials} credentials, a run each every ${stepMinutes} simulated minutes for ${hours} h; 10 % of token requests 503/429/timeout/dropped`,
		);
		let items = 0;
		let failed = 0;
		const failures: string[] = [];
		for (let minute = 0; minute < hours * 60; minute += stepMinutes) {
			if (minute > 0) sim.clock.advance(stepMinutes * MINUTE);
			await Promise.all(
				keys.map(async (credential, index) => {
					const list = [0, 1].map((item) => numbers[(minute + index * 3 + item) % numbers.length]);
					items += list.length;
					const run = await harness.runNode({
						parameters: {
							resource: 'invoice',
							operation: 'get',
							invoiceNumber: { __rl: true, mode: 'number', value: '={{ $json.invoiceNumber }}' },
							options: {},
						},
						input: list.map((invoiceNumber) => ({ json: { invoiceNumber } })),
						credential,
						continueOnFail: true,
					});
					const right = run.items.filter((item, position) =>
						isDeepStrictEqual(item.json, sim.data.invoice(list[position])),
					).length;
					if (run.error || right !== list.length) {
						failed += list.length - right;
						const failedItem = run.items.find((item) => item.json.error !== undefined)?.json;
						const message = run.error
							? `${run.error.message} ${run.error.description ?? ''}`
							: `${String(failedItem?.error ?? '')} ${String(failedItem?.details ?? '')}`;
						ctx.errorMessages.push(message);
						failures.push(`minute ${minute}: ${printable(message.slice(0, 160))}`);
					}
				}),
			);
		}
		const hits = sim.faults.list().map((fault) => fault.hits);
		const tokenRequests = sim.log.count('token');
		ctx.report.check(
			ITEM,
			`items failed over ${hours} simulated hours with identity-service faults (${count(items)} items, ${credentials} credentials)`,
			failed,
			'0',
			failed === 0,
			failures.length ? failures.slice(0, 3).join(' | ') : undefined,
		);
		ctx.report.check(
			ITEM,
			'token requests answered with a fault (503 / 429 / timeout / dropped) of all token requests',
			`${hits.join(' / ')} of ${tokenRequests} (${((hits.reduce((sum, hit) => sum + hit, 0) / Math.max(1, tokenRequests)) * 100).toFixed(1)} %)`,
			`faults of each kind (${kinds.join(', ')})`,
			hits.reduce((sum, hit) => sum + hit, 0) > 0,
		);
		ctx.report.info(
			ITEM,
			'tokens issued (one per credential per hour, plus answers lost on the way)',
			sim.log.tokensIssued(),
			`${credentials * hours}–${credentials * (hours + 1)} + lost answers`,
		);
	} finally {
		await testbed.close();
	}
}
