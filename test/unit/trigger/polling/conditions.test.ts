/**
 * The Polling Trigger under the conditions real services create (issue 20), in simulated time:
 * records changed twice within a second, invoices listed long after their issueDate or with an
 * issueDate of another form, edits after a final state, lists without totalItems or in another
 * order, stamps the trigger cannot trust, overlapping polls and rate limits. Each change must
 * start the workflow once: nothing lost, nothing twice.
 */
import type { IDataObject } from 'n8n-workflow';

import { ERRORS_TELL_N8N_HOW_LONG_TO_WAIT, testNeeding2x } from '../../../harness/engine';
import {
	inProcessBed,
	InProcessTrigger,
	type InProcessBed,
} from '../../../harness/in-process-poller';
import {
	allEventIds as reported,
	expectEachOnce,
	HOUR,
	issueMany,
	itemsOf,
	keys,
	MINUTE,
	pollUntilQuiet,
} from '../../../harness/polled-events';

/** A service of its own for each test: 30 invoices and 40 assets. */
let bed: InProcessBed;

beforeEach(() => {
	bed = inProcessBed({ invoices: 30, assets: 40 });
});

function workflow(events: string[] = ['*'], budgetMs?: number) {
	return new InProcessTrigger(bed, { events, budgetMs });
}

/** The first `count` assets that are not retired. */
function assetIds(count: number): string[] {
	return bed.sim.data
		.assets()
		.filter((asset) => asset.status !== 'retired')
		.slice(0, count)
		.map((asset) => asset.assetId);
}

function openAsset(): string {
	const [assetId] = assetIds(1);
	if (!assetId) throw new Error('No asset left to change');
	return assetId;
}

describe('Polling Trigger: changes that share a second', () => {
	test('an invoice paid in the second it was issued (and polled) in is reported paid; the same state read again is not', async () => {
		const { sim } = bed;
		const polling = workflow(['invoice.issued', 'invoice.paid']);
		await polling.activate();
		sim.clock.advance(MINUTE);
		const expected: string[] = [];
		let sameSecond = 0;
		for (let attempt = 0; attempt < 10 && sameSecond < 2; attempt++) {
			const issued = sim.issueInvoice().invoice;
			await polling.poll();
			const paid = sim.payInvoice(issued.invoiceNumber).invoice;
			await polling.poll();
			expected.push(
				`invoice.issued:${issued.invoiceNumber}`,
				`invoice.paid:${issued.invoiceNumber}`,
			);
			if (paid.updatedAt === issued.updatedAt) sameSecond += 1;
		}
		expect(sameSecond).toBeGreaterThan(0);
		expect(itemsOf(await polling.poll())).toEqual([]);
		expect(reported(polling)).toEqual(expected);
	});

	test('an asset changed twice within one second, polled in between, is reported twice, with two eventIds', async () => {
		const { sim } = bed;
		const polling = workflow(['asset.updated']);
		await polling.activate();
		sim.clock.advance(MINUTE);
		const assetId = openAsset();
		const first = sim.updateAsset(assetId, { site: 'Zurich Lab' }).asset;
		const firstItems = itemsOf(await polling.poll());
		const second = sim.updateAsset(assetId, { site: 'Vienna Office' }).asset;
		const secondItems = itemsOf(await polling.poll());
		expect(second.updatedAt).toBe(first.updatedAt);
		expect(firstItems.map((item) => (item.data as IDataObject).site)).toEqual(['Zurich Lab']);
		expect(secondItems.map((item) => (item.data as IDataObject).site)).toEqual(['Vienna Office']);
		expect(firstItems[0].eventId).toMatch(
			new RegExp(`^asset\\.updated:${assetId}:${first.updatedAt}:[0-9a-f]{8}$`),
		);
		expect(secondItems[0].eventId).not.toBe(firstItems[0].eventId);
		expect(secondItems[0].eventId).toMatch(`asset.updated:${assetId}:${second.updatedAt}:`);
		expect(itemsOf(await polling.poll())).toEqual([]);
	});

	test('two assets changed in one second each several times, with a poll after each change: every state once', async () => {
		const { sim } = bed;
		const polling = workflow(['asset.updated']);
		await polling.activate();
		sim.clock.advance(MINUTE);
		const [a, b] = assetIds(2);
		const sites = ['Berlin HQ', 'Munich DC-2', 'Hamburg Branch'];
		for (const site of sites) {
			sim.updateAsset(a, { site });
			sim.updateAsset(b, { site });
			await polling.poll();
		}
		const items = polling.executions.flat().map((item) => item.json);
		expect(
			items
				.map(
					(item) =>
						`${String((item.data as IDataObject).assetId)} ${String((item.data as IDataObject).site)}`,
				)
				.sort(),
		).toEqual(sites.flatMap((site) => [`${a} ${site}`, `${b} ${site}`]).sort());
		expect(new Set(reported(polling)).size).toBe(6);
	});
});

describe('Polling Trigger: when an invoice counts as issued', () => {
	test('an invoice listed hours after its issueDate (a sync lag) is reported issued once, and paid later only as paid', async () => {
		const { sim } = bed;
		const polling = workflow(['invoice.issued', 'invoice.paid']);
		await polling.activate();
		sim.clock.advance(3 * HOUR);
		// Issued 2 hours ago by the enterprise system, after the trigger started; listed only now.
		const issueDate = new Date(sim.clock.now().getTime() - 2 * HOUR)
			.toISOString()
			.replace(/\.\d{3}Z$/, 'Z');
		const late = sim.issueInvoice({ issueDate }).invoice;
		expect(late.updatedAt > late.issueDate).toBe(true);
		expect(itemsOf(await polling.poll())).toEqual([
			expect.objectContaining({
				eventId: `invoice.issued:${late.invoiceNumber}`,
				occurredAt: issueDate,
			}),
		]);
		sim.clock.advance(10 * MINUTE);
		sim.payInvoice(late.invoiceNumber);
		expect(keys(itemsOf(await polling.poll()))).toEqual([`invoice.paid:${late.invoiceNumber}`]);
		sim.clock.advance(10 * MINUTE);
		sim.editInvoice(late.invoiceNumber);
		expect(itemsOf(await polling.poll())).toEqual([]);
	});

	test('an invoice issued before the trigger started is never reported as issued: paid now, it is only paid', async () => {
		const { sim } = bed;
		const old = sim.issueInvoice().invoice.invoiceNumber;
		// Back-dated to before the start, first listed after it: it counts as issued before.
		const backDated = sim.issueInvoice({ issueDate: '2025-06-30T08:00:00Z' }).invoice.invoiceNumber;
		// Dated ahead (a scheduled invoice), listed before the start.
		const ahead = new Date(sim.clock.now().getTime() + 2 * 24 * HOUR).toISOString();
		const scheduled = sim.issueInvoice({ issueDate: `${ahead.slice(0, 10)}T00:00:00Z` }).invoice;
		sim.clock.advance(10 * MINUTE);
		const polling = workflow(['invoice.issued', 'invoice.paid']);
		await polling.activate();
		sim.clock.advance(MINUTE);
		sim.payInvoice(old);
		sim.editInvoice(backDated);
		sim.editInvoice(scheduled.invoiceNumber);
		expect(keys(itemsOf(await polling.poll()))).toEqual([`invoice.paid:${old}`]);
	});

	test('a record kind whose first poll failed starts with the others: its changes after the first poll come', async () => {
		const { sim } = bed;
		const polling = workflow(['*']);
		sim.faults.add({ route: 'assets.list', status: 429, retryAfter: 60, times: 1 });
		await polling.activate();
		sim.clock.advance(MINUTE);
		const [assetId] = assetIds(1);
		const asset = sim.updateAsset(assetId).asset;
		await pollUntilQuiet(polling, bed);
		expect(reported(polling).map((id) => id.replace(/:[0-9a-f]{8}$/, ''))).toEqual([
			`asset.updated:${assetId}:${asset.updatedAt}`,
		]);
	});

	test('issueDates as a date alone, with an offset or with fractions are read; each such invoice is issued once', async () => {
		const { sim } = bed;
		const polling = workflow(['invoice.issued', 'invoice.paid']);
		await polling.activate();
		sim.clock.advance(26 * HOUR);
		const now = sim.clock.now();
		const day = now.toISOString().slice(0, 10);
		const forms = {
			// The day of issue alone: it may mean any moment of that day, so it counts as after the start.
			dateOnly: day,
			offset: `${day}T${String(now.getUTCHours()).padStart(2, '0')}:00:00+00:00`,
			fractions: `${now.toISOString().slice(0, 19)}.250Z`,
		};
		const numbers = Object.values(forms).map(
			(issueDate) => sim.issueInvoice({ issueDate }).invoice.invoiceNumber,
		);
		// A date alone more than 3 days (ISSUED_WITHIN_MS) before the first sighting: not issued now.
		const dayBefore = new Date(now.getTime() - 5 * 24 * HOUR).toISOString().slice(0, 10);
		const before = sim.issueInvoice({ issueDate: dayBefore }).invoice.invoiceNumber;
		const first = itemsOf(await polling.poll());
		expect(keys(first).sort()).toEqual(numbers.map((number) => `invoice.issued:${number}`).sort());
		expect(
			first.find((item) => (item.data as IDataObject).invoiceNumber === numbers[0]),
		).toMatchObject({
			occurredAt: `${day}T00:00:00Z`,
		});
		sim.clock.advance(MINUTE);
		for (const number of [...numbers, before]) sim.payInvoice(number);
		expect(keys(itemsOf(await polling.poll())).sort()).toEqual(
			[...numbers, before].map((number) => `invoice.paid:${number}`).sort(),
		);
	});
});

describe('Polling Trigger: final states once', () => {
	test('a paid or cancelled invoice edited later starts nothing; a retired asset edited later is an Asset Updated', async () => {
		const { sim } = bed;
		const polling = workflow(['*']);
		await polling.activate();
		sim.clock.advance(MINUTE);
		const paid = sim.issueInvoice().invoice.invoiceNumber;
		const cancelled = sim.issueInvoice().invoice.invoiceNumber;
		sim.payInvoice(paid);
		sim.cancelInvoice(cancelled);
		const assetId = openAsset();
		sim.retireAsset(assetId);
		expect(keys(itemsOf(await polling.poll())).sort()).toEqual(
			[
				`asset.retired:${assetId}`,
				`invoice.cancelled:${cancelled}`,
				`invoice.issued:${cancelled}`,
				`invoice.issued:${paid}`,
				`invoice.paid:${paid}`,
			].sort(),
		);
		for (let round = 0; round < 2; round++) {
			sim.clock.advance(MINUTE);
			sim.editInvoice(paid);
			sim.editInvoice(cancelled);
			const edited = sim.updateAsset(assetId, { site: `Site ${round}` }).asset;
			const items = itemsOf(await polling.poll());
			expect(items).toEqual([
				expect.objectContaining({
					eventType: 'asset.updated',
					data: expect.objectContaining({ status: 'retired', site: `Site ${round}` }),
				}),
			]);
			expect(items[0].eventId).toContain(`asset.updated:${assetId}:${edited.updatedAt}:`);
		}
		expect(itemsOf(await polling.poll())).toEqual([]);
	});
});

describe('Polling Trigger: lists that page otherwise', () => {
	test('a list without totalItems is read to its short page: 250 changes, 250 events', async () => {
		const { sim } = bed;
		const polling = workflow(['invoice.issued']);
		await polling.activate();
		sim.clock.advance(MINUTE);
		sim.setListShape({ totalItems: 'null' });
		const expected = Array.from({ length: 250 }, () => {
			sim.clock.advance(1000);
			return `invoice.issued:${sim.issueInvoice().invoice.invoiceNumber}`;
		});
		expect(itemsOf(await polling.poll()).map((item) => item.eventId)).toEqual(expected);
		expect(itemsOf(await polling.poll())).toEqual([]);
	});

	test('without totalItems, in updatedAt order, a record changed while the pages are read moves the others up: the one a follow read missed comes with the settle read, each change once', async () => {
		const { sim } = bed;
		sim.setListShape({ order: 'updatedAt', totalItems: 'null' });
		const polling = workflow(['invoice.issued', 'invoice.paid']);
		await polling.activate();
		sim.clock.advance(MINUTE);
		const numbers = Array.from({ length: 250 }, () => {
			sim.clock.advance(1000);
			return sim.issueInvoice().invoice.invoiceNumber;
		});
		const paidDuringRead: string[] = [];
		let lists = 0;
		sim.onRequest = ({ route }) => {
			if (route !== 'invoices.list') return;
			lists += 1;
			// As page 2 is asked for, an invoice of page 1 changes and moves to the end.
			if (lists === 2) {
				sim.clock.advance(1000);
				sim.payInvoice(numbers[4]);
				paidDuringRead.push(numbers[4]);
			}
		};
		itemsOf(await polling.poll());
		sim.onRequest = undefined;
		expect(paidDuringRead).toEqual([numbers[4]]);
		await pollUntilQuiet(polling, bed);
		expectEachOnce(polling, [
			...numbers.map((number) => `invoice.issued:${number}`),
			`invoice.paid:${numbers[4]}`,
		]);
	});
});

describe('Polling Trigger: stamps it cannot trust', () => {
	test('a record stamped years ahead is reported once and blinds the trigger to nothing', async () => {
		const { sim } = bed;
		const polling = workflow(['invoice.issued', 'invoice.paid']);
		await polling.activate();
		sim.clock.advance(MINUTE);
		const ahead = sim.issueInvoice().invoice.invoiceNumber;
		sim.restamp('invoice', ahead, '2099-01-01T00:00:00Z');
		expect(keys(itemsOf(await polling.poll()))).toEqual([`invoice.issued:${ahead}`]);
		for (let round = 0; round < 3; round++) {
			sim.clock.advance(10 * MINUTE);
			const later = sim.issueInvoice().invoice.invoiceNumber;
			expect(keys(itemsOf(await polling.poll()))).toEqual([`invoice.issued:${later}`]);
		}
		expect(itemsOf(await polling.poll())).toEqual([]);
	});

	test('a record with an unreadable updatedAt is reported once and jams nothing', async () => {
		const { sim } = bed;
		const polling = workflow(['asset.updated', 'asset.retired']);
		await polling.activate();
		sim.clock.advance(MINUTE);
		const odd = openAsset();
		sim.updateAsset(odd, { site: 'London Docklands' });
		sim.restamp('asset', odd, 'yesterday, around noon');
		expect(keys(itemsOf(await polling.poll()))).toEqual([`asset.updated:${odd}`]);
		for (let round = 0; round < 2; round++) {
			sim.clock.advance(10 * MINUTE);
			// Another asset: the odd one stays listed with its unreadable stamp.
			const other = assetIds(3).find((assetId) => assetId !== odd) as string;
			sim.retireAsset(other);
			const outcome = await polling.poll();
			expect(keys(itemsOf(outcome))).toEqual([`asset.retired:${other}`]);
		}
	});

	test('updatedAt with fractions of a second or a UTC offset: each change once', async () => {
		const { sim } = bed;
		const polling = workflow(['asset.updated']);
		await polling.activate();
		sim.clock.advance(MINUTE);
		const now = sim.clock.now();
		const second = now.toISOString().slice(0, 19);
		const [withFraction, withOffset] = assetIds(2);
		sim.updateAsset(withFraction, { site: 'Zurich Lab' });
		sim.restamp('asset', withFraction, `${second}.500Z`);
		sim.updateAsset(withOffset, { site: 'Zurich Lab' });
		// The same moment at two hours behind UTC: as text it looks earlier than it is.
		const local = new Date(now.getTime() - 2 * HOUR).toISOString().slice(0, 19);
		sim.restamp('asset', withOffset, `${local}-02:00`);
		expect(keys(itemsOf(await polling.poll())).sort()).toEqual(
			[`asset.updated:${withFraction}`, `asset.updated:${withOffset}`].sort(),
		);
		sim.clock.advance(2000);
		expect(itemsOf(await polling.poll())).toEqual([]);
		sim.clock.advance(10 * MINUTE);
		expect(itemsOf(await polling.poll())).toEqual([]);
	});
});

describe('Polling Trigger: polls n8n runs side by side, and rate limits', () => {
	test('two polls of one trigger at the same time (n8n’s legacy scheduler) report each change once', async () => {
		const polling = workflow(['invoice.issued']);
		await polling.activate();
		bed.sim.clock.advance(MINUTE);
		const expected = issueMany(bed, 5);
		bed.sim.faults.add({ route: 'invoices.list', latencyMs: 300 });
		await Promise.all([polling.poll(), polling.poll()]);
		await polling.poll();
		expect(reported(polling).sort()).toEqual([...expected].sort());
	});

	// n8n 1.x's NodeApiError carries no wait for its scheduler to back off by.
	testNeeding2x(ERRORS_TELL_N8N_HOW_LONG_TO_WAIT)(
		'a rate limit longer than the poll budget ends the poll at once, with the wait n8n 2.x backs off by',
		async () => {
			const { sim } = bed;
			const polling = workflow(['invoice.issued'], 3000);
			await polling.activate();
			sim.clock.advance(MINUTE);
			const number = sim.issueInvoice().invoice.invoiceNumber;
			sim.faults.add({ route: 'invoices.list', status: 429, retryAfter: 10, times: 1 });
			const failed = await polling.poll();
			expect(polling.durations.at(-1)).toBeLessThan(3000);
			if (!('error' in failed)) throw new Error('The poll did not fail');
			expect(failed.error).toMatchObject({
				httpCode: '429',
				failure: { cause: 'rate-limited', retryAfterMs: 10_000 },
			});
			expect(itemsOf(await polling.poll()).map((item) => item.eventId)).toEqual([
				`invoice.issued:${number}`,
			]);
		},
	);
});
