/* eslint-disable @n8n/community-nodes/no-restricted-imports */
/**
 * Invoice Get under faults, through the harness (n8n-core's engine, the simulator over
 * HTTPS). 10% of the requests are answered 500, 503 or 429 (both with a small Retry-After) and 1%
 * are dropped; every output item is checked against the simulator's record. The retries absorb
 * all of these, so the "failed with a clear error" path is then exercised on purpose: a few items
 * whose every attempt is answered 500 (a fault that outlasts the retry policy) must each fail with
 * the node's clear message.
 */
import { performance } from 'node:perf_hooks';
import { isDeepStrictEqual } from 'node:util';

import { DEFAULT_RETRY_POLICY } from '../../nodes/InvoicingAssets/transport/retry';
import { startTestbed } from '../harness/testbed';
import type { FaultRule } from '../simulator';
import { count, ratio } from './report';
import { printable, trackTestbed, type RunContext } from './support';

const ITEM = '4 faults';
/** Items whose every attempt fails, to see the clear-error path taken. */
const DOOMED_ITEMS = 3;

/** Known, clear messages of a failed Invoice Get. */
const CLEAR_FAILURE =
	/^(The service was not able to process your request|Service unavailable - .*|The service is limiting the request rate|The connection (to the server was closed unexpectedly.*|was aborted, perhaps the server is offline))$/;

/**
 * Rules whose overall shares are the given ones: the injector applies the first rule whose roll
 * passes, so each rule's probability is its share of what the rules before it let through.
 */
export function exclusiveFaults(rules: Array<FaultRule & { share: number }>): FaultRule[] {
	let left = 1;
	return rules.map(({ share, ...rule }) => {
		const probability = share / left;
		left -= share;
		return { ...rule, probability };
	});
}

export async function actionFaultsCheck(ctx: RunContext) {
	const items = ctx.sizes.faultItems;
	const testbed = trackTestbed(await startTestbed({ invoices: Math.max(items, 1050), assets: 50 }));
	const { sim, harness, credential } = testbed;
	try {
		const numbers = sim.data
			.invoices()
			.slice(0, items)
			.map((invoice) => invoice.invoiceNumber);
		const route = 'invoices.get' as const;
		const faultShares = [
			{ route, drop: true, share: 0.01 },
			{ route, status: 500, share: 0.1 / 3 },
			{ route, status: 503, retryAfter: 1, share: 0.1 / 3 },
			{ route, status: 429, retryAfter: 1, share: 0.1 / 3 },
		];
		const faultedShare = faultShares.reduce((sum, fault) => sum + fault.share, 0);
		for (const rule of exclusiveFaults(faultShares)) sim.faults.add(rule);
		ctx.say(`  faults: ${count(items)} Invoice Get items, 10% 500/503/429 and 1% dropped`);
		const started = performance.now();
		const run = await harness.runNode({
			parameters: {
				resource: 'invoice',
				operation: 'get',
				invoiceNumber: { __rl: true, mode: 'number', value: '={{ $json.invoiceNumber }}' },
				options: {},
			},
			input: numbers.map((invoiceNumber) => ({ json: { invoiceNumber } })),
			credential,
			continueOnFail: true,
		});
		const seconds = (performance.now() - started) / 1000;
		if (run.error) throw new Error(`the node failed as a whole: ${run.error.message}`);

		// The service's answers to each item's requests: an item may fail only when the service
		// faulted every attempt the retry policy allows (a few hundredths of an item per run at full
		// size, so now and then one).
		const attemptsOf = new Map<string, Array<string | null>>();
		for (const entry of sim.log.entries({ route })) {
			const attempts = attemptsOf.get(entry.params.invoiceNumber) ?? [];
			attempts.push(entry.fault);
			attemptsOf.set(entry.params.invoiceNumber, attempts);
		}
		const everyAttemptFaulted = (invoiceNumber: string) => {
			const attempts = attemptsOf.get(invoiceNumber) ?? [];
			return (
				attempts.length === DEFAULT_RETRY_POLICY.maxAttempts &&
				attempts.every((fault) => fault === 'status' || fault === 'drop')
			);
		};
		let succeeded = 0;
		let failedClearly = 0;
		let failedWhereTheServiceFaultedEveryAttempt = 0;
		let wrong = 0;
		const unclear: string[] = [];
		const answered = new Set<number>();
		for (const item of run.items) {
			const paired = item.pairedItem;
			const index = typeof paired === 'object' && !Array.isArray(paired) ? paired.item : -1;
			if (index < 0 || index >= numbers.length || answered.has(index)) {
				wrong += 1;
				continue;
			}
			answered.add(index);
			const json = item.json as Record<string, unknown>;
			if (typeof json.error === 'string') {
				ctx.errorMessages.push(json.error, String(json.details ?? ''));
				if (CLEAR_FAILURE.test(json.error)) failedClearly += 1;
				else unclear.push(json.error);
				if (everyAttemptFaulted(numbers[index])) failedWhereTheServiceFaultedEveryAttempt += 1;
			} else if (isDeepStrictEqual(json, sim.data.invoice(numbers[index]))) {
				succeeded += 1;
			} else {
				wrong += 1;
			}
		}
		const lost = numbers.length - answered.size;
		const requests = sim.log.count(route);
		const faults = sim.faults.list().reduce((sum, fault) => sum + fault.hits, 0);

		ctx.report.check(
			ITEM,
			`Invoice Get items that succeeded, each equal to the simulator’s record, of those the service did not fault on all ${DEFAULT_RETRY_POLICY.maxAttempts} attempts`,
			`${count(succeeded)} / ${count(items - failedWhereTheServiceFaultedEveryAttempt)} (${((succeeded / (items - failedWhereTheServiceFaultedEveryAttempt)) * 100).toFixed(2)} %)`,
			'100 %',
			succeeded === items - failedWhereTheServiceFaultedEveryAttempt,
		);
		ctx.report.info(
			ITEM,
			`items the service faulted on all ${DEFAULT_RETRY_POLICY.maxAttempts} attempts (each failed, by the retry policy)`,
			count(failedWhereTheServiceFaultedEveryAttempt),
			'—',
			`about ${ratio(items * faultedShare ** DEFAULT_RETRY_POLICY.maxAttempts)} expected per run (${Math.round(faultedShare * 100)} % of the requests faulted)`,
		);
		ctx.report.check(
			ITEM,
			'items failed with a clear error / with an unclear one',
			`${failedClearly} / ${unclear.length}`,
			'reported / 0',
			unclear.length === 0,
			unclear.length
				? `unclear: ${printable([...new Set(unclear)].slice(0, 3).join(' | '))}`
				: undefined,
		);
		ctx.report.check(ITEM, 'items lost or silently wrong', lost + wrong, '0', lost + wrong === 0);
		ctx.report.info(
			ITEM,
			'requests / faults injected / wall time',
			`${count(requests)} / ${count(faults)} (${((faults / requests) * 100).toFixed(1)} %) / ${seconds.toFixed(1)} s`,
			'—',
			`retry policy unchanged (5 attempts, 60 s); ${ratio(requests / items)} requests per item`,
		);

		// A fault that outlasts the retries: every attempt of a few items answered 500.
		sim.faults.clear();
		const doomed = numbers.slice(0, DOOMED_ITEMS);
		const fault = sim.faults.add({
			route,
			status: 500,
			times: DOOMED_ITEMS * DEFAULT_RETRY_POLICY.maxAttempts,
		});
		const doomedRun = await harness.runNode({
			parameters: {
				resource: 'invoice',
				operation: 'get',
				invoiceNumber: { __rl: true, mode: 'number', value: '={{ $json.invoiceNumber }}' },
				options: { concurrency: 1 },
			},
			input: doomed.map((invoiceNumber) => ({ json: { invoiceNumber } })),
			credential,
			continueOnFail: true,
		});
		// A rule is removed once its `times` are used up.
		const injected =
			DOOMED_ITEMS * DEFAULT_RETRY_POLICY.maxAttempts -
			(sim.faults.list().find((rule) => rule.id === fault.id)?.remaining ?? 0);
		sim.faults.clear();
		const messages = doomedRun.items.map((item) =>
			String((item.json as Record<string, unknown>).error ?? ''),
		);
		ctx.errorMessages.push(...messages);
		const clear = messages.filter((message) => CLEAR_FAILURE.test(message)).length;
		ctx.report.check(
			ITEM,
			`a fault outlasting the retries (every attempt of ${DOOMED_ITEMS} items answered 500): faults injected / items failed with a clear error`,
			`${injected} / ${clear}`,
			`${DOOMED_ITEMS * DEFAULT_RETRY_POLICY.maxAttempts} / ${DOOMED_ITEMS}`,
			!doomedRun.error &&
				injected === DOOMED_ITEMS * DEFAULT_RETRY_POLICY.maxAttempts &&
				clear === DOOMED_ITEMS &&
				messages.length === DOOMED_ITEMS,
			clear === DOOMED_ITEMS
				? `message: ${printable(messages[0])}`
				: `messages: ${printable([...new Set(messages)].join(' | ')) || (doomedRun.error?.message ?? 'none')}`,
		);
	} finally {
		await testbed.close();
	}
}
