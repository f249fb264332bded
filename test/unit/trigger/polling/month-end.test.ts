/**
 * The Polling Trigger at month-end, in simulated time: a billing run issues thousands of invoices
 * within a second, thousands get paid, the service lists some changes late. Each condition runs
 * published polls against the in-memory service until nothing more comes, and asserts that every
 * change started the workflow once: 0 lost, 0 twice, 0 for no change made.
 */
import {
	inProcessBed,
	InProcessTrigger,
	type InProcessBed,
} from '../../../harness/in-process-poller';
import {
	allEventIds,
	expectEachOnce,
	HOUR,
	issueMany,
	LISTED_WITHIN,
	MINUTE,
	pollUntilQuiet,
} from '../../../harness/polled-events';
import { DEADLINE_GRACE_MS } from '../../../../nodes/InvoicingAssets/transport/retry';

/** A service of its own for a test: 5 invoices and 5 assets. */
function bedOf(): InProcessBed {
	return inProcessBed({ invoices: 5, assets: 5 });
}

function trigger(bed: InProcessBed, events: string[], budgetMs?: number) {
	return new InProcessTrigger(bed, { events, budgetMs });
}

/** A published trigger for invoice.issued with a 1 s budget, and `count` invoices issued a minute on. */
async function burstAfterBaseline(bed: InProcessBed, count: number) {
	const polling = trigger(bed, ['invoice.issued'], 1000);
	await polling.activate();
	bed.sim.clock.advance(MINUTE);
	return { polling, expected: issueMany(bed, count) };
}

describe('Polling Trigger at month-end', () => {
	test('a live burst of 3,000 invoices in one second, larger than a poll, comes while it is young, each once, and is settled once it is 5 minutes old', async () => {
		const bed = bedOf();
		const { polling, expected } = await burstAfterBaseline(bed, 3000);
		bed.sim.faults.add({ route: 'invoices.list', latencyMs: 200 });
		// Polls every 10 s of the service's time: the burst is reported over several polls, all of
		// it while it is younger than the listing bound (before any settle read).
		const young: number[] = [];
		const burstAt = bed.sim.clock.now().getTime();
		while (
			young.reduce((sum, count) => sum + count, 0) < 3000 &&
			bed.sim.clock.now().getTime() - burstAt < LISTED_WITHIN - 20_000
		) {
			const outcome = await polling.poll();
			if ('error' in outcome) throw outcome.error;
			young.push(outcome.items?.length ?? 0);
			bed.sim.clock.advance(10_000);
		}
		expect(young.filter((count) => count > 0).length).toBeGreaterThan(1);
		expect(young.reduce((sum, count) => sum + count, 0)).toBe(3000);
		await pollUntilQuiet(polling, bed);
		expectEachOnce(polling, expected);
	});

	test('one second holding 4,000 changes, aged, drains page by page over several polls, none past its budget', async () => {
		const bed = bedOf();
		const { polling, expected } = await burstAfterBaseline(bed, 4000);
		bed.sim.clock.advance(10 * MINUTE);
		bed.sim.faults.add({ route: 'invoices.list', latencyMs: 200 });
		const perPoll: number[] = [];
		const first = polling.durations.length;
		for (let poll = 0; poll < 30 && allEventIds(polling).length < 4000; poll++) {
			const outcome = await polling.poll();
			if ('error' in outcome) throw outcome.error;
			perPoll.push(outcome.items?.length ?? 0);
		}
		expect(Math.max(...polling.durations.slice(first))).toBeLessThanOrEqual(
			1000 + DEADLINE_GRACE_MS,
		);
		expect(perPoll.filter((count) => count > 0).length).toBeGreaterThan(1);
		expect(perPoll.every((count) => count > 0)).toBe(true);
		await pollUntilQuiet(polling, bed);
		expectEachOnce(polling, expected);
	});

	test('late-listed members of a big second: 2,500 changes in one second, one in ten listed up to 4 minutes late, each once', async () => {
		const bed = bedOf();
		const polling = trigger(bed, ['invoice.issued']);
		await polling.activate();
		bed.sim.clock.advance(MINUTE);
		let made = 0;
		bed.sim.data.setListingLag(() => (made++ % 10 === 3 ? 4 * MINUTE : 0));
		const expected = issueMany(bed, 2500);
		bed.sim.data.setListingLag(undefined);
		const first = await polling.poll();
		if ('error' in first) throw first.error;
		expect(first.items?.length).toBe(2250);
		await pollUntilQuiet(polling, bed, MINUTE);
		expectEachOnce(polling, expected);
	});

	test('a billing run of 4,000 invoices dated one day, issued in batches over 8 hours: each issued once', async () => {
		const bed = bedOf();
		const polling = trigger(bed, ['invoice.issued']);
		await polling.activate();
		const day = new Date(bed.sim.clock.now().getTime() + HOUR).toISOString().slice(0, 10);
		const expected: string[] = [];
		for (let batch = 0; batch < 8; batch++) {
			bed.sim.clock.advance(HOUR);
			expected.push(...issueMany(bed, 500, { issueDate: `${day}T00:00:00Z` }));
			await pollUntilQuiet(polling, bed, 10 * MINUTE, 3);
		}
		await pollUntilQuiet(polling, bed, 10 * MINUTE);
		expectEachOnce(polling, expected);
	});

	test('corrections to 3,500 invoices paid over a day report nothing again', async () => {
		const bed = bedOf();
		const polling = trigger(bed, ['invoice.issued', 'invoice.paid']);
		await polling.activate();
		bed.sim.clock.advance(MINUTE);
		const numbers = Array.from(
			{ length: 3500 },
			() => bed.sim.issueInvoice().invoice.invoiceNumber,
		);
		await pollUntilQuiet(polling, bed);
		for (const [index, number] of numbers.entries()) {
			if (index % 500 === 0) bed.sim.clock.advance(HOUR);
			bed.sim.payInvoice(number);
		}
		await pollUntilQuiet(polling, bed);
		bed.sim.clock.advance(2 * 24 * HOUR);
		for (const number of numbers) bed.sim.editInvoice(number);
		await pollUntilQuiet(polling, bed);
		expectEachOnce(polling, [
			...numbers.map((number) => `invoice.issued:${number}`),
			...numbers.map((number) => `invoice.paid:${number}`),
		]);
	});

	test('the start-of-trigger sync lag: an invoice dated before the start but listed after it is issued once; one listed before the start never is', async () => {
		const bed = bedOf();
		const { sim } = bed;
		const before = new Date(sim.clock.now().getTime() - HOUR).toISOString().replace(/\.\d+Z$/, 'Z');
		const listedBefore = sim.issueInvoice({ issueDate: before }).invoice.invoiceNumber;
		// Issued now, listed only 4 minutes later: after the trigger's start.
		sim.data.setListingLag(() => 4 * MINUTE);
		const listedAfter = sim.issueInvoice({ issueDate: before }).invoice.invoiceNumber;
		sim.data.setListingLag(undefined);
		const polling = trigger(bed, ['invoice.issued', 'invoice.paid']);
		await polling.activate();
		sim.clock.advance(MINUTE);
		sim.payInvoice(listedBefore);
		await pollUntilQuiet(polling, bed);
		expectEachOnce(polling, [`invoice.issued:${listedAfter}`, `invoice.paid:${listedBefore}`]);
	});

	test('overlapping polls during a live burst of 3,000 in one second: the later one leaves the work to the running one, each within its budget; each change once', async () => {
		const bed = bedOf();
		const { sim, time } = bed;
		const { polling, expected } = await burstAfterBaseline(bed, 3000);
		sim.faults.add({ route: 'invoices.list', latencyMs: 200 });
		for (let round = 0; round < 20 && allEventIds(polling).length < 3000; round++) {
			await time.run(async () => {
				const started = time.now();
				const running = polling.poll();
				await time.sleep(300);
				const overlapping = await polling.poll();
				expect(overlapping).toEqual({ items: null });
				const outcome = await running;
				if ('error' in outcome) throw outcome.error;
				expect(time.now() - started).toBeLessThanOrEqual(1000 + DEADLINE_GRACE_MS);
			});
			sim.clock.advance(10_000);
		}
		await pollUntilQuiet(polling, bed);
		expectEachOnce(polling, expected);
	});

	test('a poll whose list request hangs ends within 1.5 s of its budget, stores nothing, and does not stop the next poll; each change once', async () => {
		const bed = bedOf();
		const { sim } = bed;
		const { polling, expected } = await burstAfterBaseline(bed, 50);
		const saved = JSON.stringify(polling.savedStaticData());
		sim.faults.add({ route: 'invoices.list', latencyMs: 8000, times: 1 });
		const hung = await polling.poll();
		expect(polling.durations.at(-1)).toBeLessThanOrEqual(1000 + DEADLINE_GRACE_MS);
		expect('error' in hung).toBe(true);
		expect(JSON.stringify(polling.savedStaticData())).toBe(saved);
		const next = await polling.poll();
		if ('error' in next) throw next.error;
		expect(next.items).toHaveLength(50);
		await pollUntilQuiet(polling, bed);
		expectEachOnce(polling, expected);
	});

	test('on n8n’s durable scheduler, a poll that starts before the last reporting poll’s static data landed reports nothing again', async () => {
		const bed = bedOf();
		const { sim } = bed;
		const polling = new InProcessTrigger(bed, {
			events: ['invoice.issued'],
			budgetMs: 5000,
			durable: true,
		});
		await polling.activate();
		sim.clock.advance(MINUTE);
		await polling.poll();
		const first = issueMany(bed, 30);
		const reporting = await polling.poll(true);
		expect('items' in reporting && reporting.items).toHaveLength(30);
		// n8n has not saved it yet: the next poll reads the static data before it.
		expect(await polling.poll()).toEqual({ items: null });
		polling.commitHeld();
		const second = issueMany(bed, 5);
		await pollUntilQuiet(polling, bed);
		expectEachOnce(polling, [...first, ...second]);
	});
});
