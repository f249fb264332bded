/* eslint-disable @n8n/community-nodes/no-restricted-globals */
/**
 * `npm run bench:polling`: how the Polling Trigger drains a month-end's changes, as list requests
 * per 100 changes and changes reported per poll, beside the ideal: a poll's budget ÷ the time
 * of a list request × the pages in flight × the page size (every request a full page, none
 * wasted, nothing read twice).
 *
 * - An aged backlog: 10,000 invoices issued over an hour, read when the newest is 10 minutes
 *   old. Each change needs one read. Target: at most 1.3 list requests per 100 changes.
 * - A live burst: 10,000 invoices issued within one second, polled every 10 s of the service's
 *   time while young, then every minute until the settled position has passed them. Each change
 *   is read once as it comes and once more when it can no longer be listed late. Target: at most
 *   2.3 list requests per 100 changes.
 *
 * Both with 1 s per list request (BENCH_LIST_MS) and a 5 s poll budget (BENCH_BUDGET_MS), in
 * n8n-core's engine against the simulator over HTTPS. `-- --check` exits 1 when a target is
 * missed. Every change must come exactly once, or the run fails.
 */
import '../harness/setup-env';

import { MAX_PAGE_SIZE } from '../../nodes/InvoicingAssets/transport/contract';
import { PAGE_CONCURRENCY } from '../../nodes/InvoicingAssets/transport/pageReader';
import type { PollingWorkflow } from '../harness/poller';
import { startTestbed, type Testbed } from '../harness/testbed';
import { allEventIds, MINUTE, pollingWorkflow } from '../integration/trigger/polling-helpers';

const CHANGES = Number(process.env.BENCH_CHANGES ?? 10_000);
const LIST_MS = Number(process.env.BENCH_LIST_MS ?? 1000);
const BUDGET_MS = Number(process.env.BENCH_BUDGET_MS ?? 5000);
const CHECK = process.argv.slice(2).includes('--check');
const out = (text: string) => process.stdout.write(`${text}\n`);
const IDEAL_PER_POLL = (BUDGET_MS / LIST_MS) * PAGE_CONCURRENCY * MAX_PAGE_SIZE;

interface Figure {
	name: string;
	requestsPer100: number;
	perPoll: number;
	target: number;
	ideal: number;
}

function listRequests(bed: Testbed): number {
	return bed.sim.log.count('invoices.list');
}

async function poll(polling: PollingWorkflow, counts: number[]) {
	const outcome = await polling.poll();
	if ('error' in outcome) throw outcome.error;
	counts.push(outcome.items?.length ?? 0);
}

function checkEachOnce(polling: PollingWorkflow, expected: Set<string>, name: string) {
	const ids = allEventIds(polling);
	const lost = [...expected].filter((id) => !ids.includes(id)).length;
	const twice = ids.length - new Set(ids).size;
	if (lost > 0 || twice > 0 || ids.length !== expected.size) {
		throw new Error(`${name}: ${lost} lost, ${twice} twice of ${expected.size} changes`);
	}
}

function figure(
	name: string,
	requests: number,
	counts: number[],
	target: number,
	readsPerChange: number,
): Figure {
	const reporting = counts.filter((count) => count > 0);
	return {
		name,
		requestsPer100: (requests / CHANGES) * 100,
		perPoll: reporting.reduce((sum, count) => sum + count, 0) / Math.max(1, reporting.length),
		target,
		ideal: (readsPerChange * 100) / MAX_PAGE_SIZE,
	};
}

async function agedBacklog(): Promise<Figure> {
	const bed = await startTestbed({ invoices: 10, assets: 10 });
	try {
		const polling = pollingWorkflow(bed, ['invoice.issued'], BUDGET_MS);
		await polling.activate();
		const expected = new Set<string>();
		for (let change = 0; change < CHANGES; change++) {
			bed.sim.clock.advance((60 * MINUTE) / CHANGES);
			expected.add(`invoice.issued:${bed.sim.issueInvoice().invoice.invoiceNumber}`);
		}
		bed.sim.clock.advance(10 * MINUTE);
		bed.sim.faults.add({ route: 'invoices.list', latencyMs: LIST_MS });
		const before = listRequests(bed);
		const counts: number[] = [];
		while (allEventIds(polling).length < CHANGES && counts.length < 200)
			await poll(polling, counts);
		const requests = listRequests(bed) - before;
		checkEachOnce(polling, expected, 'aged backlog');
		return figure('aged backlog', requests, counts, 1.3, 1);
	} finally {
		await bed.close();
	}
}

async function liveBurst(): Promise<Figure> {
	const bed = await startTestbed({ invoices: 10, assets: 10 });
	try {
		const polling = pollingWorkflow(bed, ['invoice.issued'], BUDGET_MS);
		await polling.activate();
		bed.sim.clock.advance(MINUTE);
		const expected = new Set<string>();
		for (let change = 0; change < CHANGES; change++) {
			expected.add(`invoice.issued:${bed.sim.issueInvoice().invoice.invoiceNumber}`);
		}
		const burstSecond = Math.floor(bed.sim.clock.now().getTime() / 1000) * 1000;
		bed.sim.faults.add({ route: 'invoices.list', latencyMs: LIST_MS });
		const before = listRequests(bed);
		const counts: number[] = [];
		while (allEventIds(polling).length < CHANGES && counts.length < 200) {
			await poll(polling, counts);
			bed.sim.clock.advance(10_000);
		}
		const young = counts.length;
		// Then every minute, until a settle window (one with updatedTo) reached past the burst and
		// the poll after it read no settle window any more.
		const settleWindows = () =>
			bed.sim.log
				.entries({ route: 'invoices.list' })
				.filter(
					(entry) =>
						typeof entry.query.updatedTo === 'string' && entry.query.issuedTo === undefined,
				);
		let settling = settleWindows().length;
		let reachedPast = false;
		for (let minute = 0; minute < 60; minute++) {
			bed.sim.clock.advance(MINUTE);
			await poll(polling, counts);
			const windows = settleWindows();
			const added = windows.length - settling;
			settling = windows.length;
			if (reachedPast && added === 0) break;
			reachedPast ||= windows.some(
				(entry) => Date.parse(String(entry.query.updatedTo)) >= burstSecond,
			);
		}
		const requests = listRequests(bed) - before;
		checkEachOnce(polling, expected, 'live burst');
		return figure('live burst', requests, counts.slice(0, young), 2.3, 2);
	} finally {
		await bed.close();
	}
}

async function main() {
	const figures = [await agedBacklog(), await liveBurst()];
	out(
		`Polling Trigger, ${CHANGES} changes, ${LIST_MS} ms per list request, ${BUDGET_MS} ms budget (ideal: ${Math.round(IDEAL_PER_POLL)} changes a poll)`,
	);
	let missed = 0;
	for (const { name, requestsPer100, perPoll, target, ideal } of figures) {
		const met = requestsPer100 <= target;
		if (!met) missed += 1;
		out(
			`  ${name}: ${requestsPer100.toFixed(2)} list requests per 100 changes (ideal ${ideal.toFixed(2)}, target ≤ ${target}: ${met ? 'met' : 'NOT MET'}); ${Math.round(perPoll)} changes a poll while it drained (${((perPoll / IDEAL_PER_POLL) * 100).toFixed(0)} % of the ideal ${Math.round(IDEAL_PER_POLL)})`,
		);
	}
	if (CHECK && missed > 0) process.exitCode = 1;
}

main().catch((error: unknown) => {
	process.stderr.write(`${String(error)}\n`);
	process.exitCode = 1;
});
