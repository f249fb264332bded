/**
 * The Polling Trigger's four invariants (docs/choosing-a-trigger.md), each under the condition
 * of issue 35 that broke it, in simulated time: a poll always makes progress, a settle never
 * blocks a follow, a change is its state and not its stamp, every bound is one. Each test asserts
 * every change once: none lost, none twice, none for no change made.
 */
import {
	inProcessBed,
	InProcessTrigger,
	type InProcessBed,
} from '../../../harness/in-process-poller';
import {
	expectEachOnce,
	HOUR,
	issueMany,
	itemsOf,
	LISTED_WITHIN,
	MINUTE,
	pollUntilQuiet,
	storedStates,
} from '../../../harness/polled-events';

const STATE_BOUND = 20_000;

/** A service of its own for a test: 5 invoices and 5 assets unless given. */
function bedOf(options: Parameters<typeof inProcessBed>[0] = {}): InProcessBed {
	return inProcessBed({ invoices: 5, assets: 5, ...options });
}

function trigger(bed: InProcessBed, events: string[], budgetMs?: number) {
	return new InProcessTrigger(bed, { events, budgetMs });
}

/**
 * 800 invoices issued in one second and reported by the polls while young, then aged past the
 * listing bound: the span a settle read must now read exactly, 8 pages at 150 ms each, more than
 * a 1 s poll can read.
 */
async function youngBurstToSettle(bed: InProcessBed, events: string[]) {
	const polling = trigger(bed, events, 1000);
	await polling.activate();
	bed.sim.clock.advance(MINUTE);
	const burstAt = bed.sim.clock.now().getTime();
	const numbers = issueMany(bed, 800).map((id) => id.replace('invoice.issued:', ''));
	await pollUntilQuiet(polling, bed, 10_000, 20);
	bed.sim.clock.advance(LISTED_WITHIN);
	return { polling, numbers, burstAt };
}

/** The invoices' settled position as n8n saved it: every change before it was settled. */
function settledOf(polling: InProcessTrigger): number {
	return (polling.savedStaticData().pollState as Record<string, { settled: number }>).invoice
		.settled;
}

/**
 * Polls, issuing one invoice before each poll; `before` changes the service before each poll and
 * `during` every 40 ms of simulated time while it runs. Returns how many polls after its own each
 * new invoice came.
 */
async function pollWhile(
	bed: InProcessBed,
	polling: InProcessTrigger,
	polls: number,
	{ before = () => {}, during = () => {} }: { before?: () => void; during?: () => void },
) {
	const lateness: number[] = [];
	const waiting = new Map<string, number>();
	for (let poll = 0; poll < polls; poll++) {
		before();
		waiting.set(bed.sim.issueInvoice().invoice.invoiceNumber, poll);
		const churn = bed.time.every(40, during);
		const outcome = await polling.poll().finally(churn);
		for (const item of 'items' in outcome ? (outcome.items ?? []) : []) {
			const at = waiting.get(String((item.json.data as { invoiceNumber: string }).invoiceNumber));
			if (item.json.eventType === 'invoice.issued' && at !== undefined) lateness.push(poll - at);
		}
		bed.sim.clock.advance(20_000);
	}
	return { lateness, newInvoices: [...waiting.keys()] };
}

/** An asset.updated eventId without its digest: the asset and its updatedAt name the change. */
const withoutDigest = (eventId: string) =>
	eventId.replace(/^(asset\.updated:.+):[0-9a-f]{8}$/, '$1');

function openAssetId(bed: InProcessBed): string {
	return bed.sim.data.assets().find((asset) => asset.status !== 'retired')?.assetId ?? '';
}

function stampOf(ms: number): string {
	return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

describe('Polling Trigger invariants', () => {
	test('churn while a span settles: the settle finishes, new invoices come with the next poll, each change once', async () => {
		const bed = bedOf();
		const events = ['invoice.issued', 'invoice.paid'];
		const { polling, numbers, burstAt } = await youngBurstToSettle(bed, events);
		bed.sim.faults.add({ route: 'invoices.list', latencyMs: 150 });
		const paid: string[] = [];
		// While every poll runs, invoices of the settling span are paid one after the other: they
		// leave it between any two of its pages.
		const { lateness, newInvoices } = await pollWhile(bed, polling, 12, {
			during: () => {
				const number = numbers[paid.length];
				if (number === undefined) return;
				bed.sim.payInvoice(number);
				paid.push(number);
			},
		});
		expect(lateness).toEqual(newInvoices.map(() => 0));
		expect(settledOf(polling)).toBeGreaterThan(burstAt);
		bed.sim.faults.clear();
		await pollUntilQuiet(polling, bed);
		expectEachOnce(polling, [
			...[...numbers, ...newInvoices].map((number) => `invoice.issued:${number}`),
			...paid.map((number) => `invoice.paid:${number}`),
		]);
	});

	test('a rate limit during a settle: every poll goes on after the last page read, so the settle finishes; new invoices come with the next poll, each change once', async () => {
		const bed = bedOf();
		const { polling, numbers, burstAt } = await youngBurstToSettle(bed, ['invoice.issued']);
		// The third list request of every poll is refused for longer than the poll may wait.
		const { lateness, newInvoices } = await pollWhile(bed, polling, 12, {
			before: () => {
				bed.sim.faults.clear();
				bed.sim.faults.add({
					route: 'invoices.list',
					status: 429,
					retryAfter: 30,
					skip: 2,
					times: 1,
				});
				bed.sim.faults.add({ route: 'invoices.list', latencyMs: 150 });
			},
		});
		expect(lateness).toEqual(newInvoices.map(() => 0));
		expect(settledOf(polling)).toBeGreaterThan(burstAt);
		bed.sim.faults.clear();
		await pollUntilQuiet(polling, bed);
		expectEachOnce(
			polling,
			[...numbers, ...newInvoices].map((number) => `invoice.issued:${number}`),
		);
	});

	test('the sync lag while the baseline is read page by page: an invoice dated before the start that reaches the list then is issued once', async () => {
		const bed = bedOf();
		const { sim } = bed;
		const polling = trigger(bed, ['invoice.issued', 'invoice.paid'], 1000);
		const listedBefore = issueMany(bed, 2400).map((id) => id.replace('invoice.issued:', ''));
		sim.clock.advance(LISTED_WITHIN + MINUTE);
		sim.faults.add({ route: 'invoices.list', latencyMs: 150 });
		await polling.activate();
		// The activation poll could not read the invoices issued in the last 3 days in its budget.
		expect(sim.log.count('invoices.list')).toBeLessThan(24);
		// Numbered before the others, it lands on a page the baseline has still to read.
		const issueDate = stampOf(sim.clock.now().getTime() - HOUR);
		const late = sim.issueInvoice({ issueDate, invoiceNumber: 'INV-0000000' }).invoice
			.invoiceNumber;
		await pollUntilQuiet(polling, bed);
		sim.payInvoice(listedBefore[7]);
		await pollUntilQuiet(polling, bed);
		expectEachOnce(polling, [`invoice.issued:${late}`, `invoice.paid:${listedBefore[7]}`]);
	});

	test('a writer’s clock ahead: a state stamped beyond the listing bound is reported once, also once the service’s time passes its stamp', async () => {
		const bed = bedOf({ assets: 20 });
		const { sim } = bed;
		const polling = trigger(bed, ['asset.updated']);
		await polling.activate();
		sim.clock.advance(MINUTE);
		const assetId = openAssetId(bed);
		sim.updateAsset(assetId, { site: 'Austin Campus' });
		const ahead = stampOf(sim.clock.now().getTime() + 20 * MINUTE);
		sim.restamp('asset', assetId, ahead);
		for (let poll = 0; poll < 40; poll++) {
			itemsOf(await polling.poll());
			sim.clock.advance(MINUTE);
		}
		const later = sim.updateAsset(assetId, { site: 'Berlin HQ' }).asset;
		await pollUntilQuiet(polling, bed);
		expectEachOnce(
			polling,
			[ahead, later.updatedAt].map((updatedAt) => `asset.updated:${assetId}:${updatedAt}`),
			withoutDigest,
		);
	});

	test('a writer’s clock behind: a payment stamped before the invoice’s previous state (and before the start) is reported, also when no poll read that state; an older state listed again (a stale read) is not', async () => {
		const bed = bedOf({ assets: 20 });
		const { sim } = bed;
		const polling = trigger(bed, ['invoice.issued', 'invoice.paid', 'asset.updated']);
		await polling.activate();
		sim.clock.advance(2000);
		const issued = sim.issueInvoice().invoice;
		const assetId = openAssetId(bed);
		const first = sim.updateAsset(assetId, { site: 'Austin Campus' }).asset;
		itemsOf(await polling.poll());
		// Issued after the start and paid before the next poll: no poll reads its issued state.
		const unread = sim.issueInvoice().invoice;
		sim.clock.advance(MINUTE);
		for (const invoice of [issued, unread]) {
			sim.payInvoice(invoice.invoiceNumber);
			sim.restamp(
				'invoice',
				invoice.invoiceNumber,
				stampOf(Date.parse(invoice.updatedAt) - 30_000),
			);
		}
		const second = sim.updateAsset(assetId, { site: 'Berlin HQ' }).asset;
		itemsOf(await polling.poll());
		sim.clock.advance(MINUTE);
		// A replica behind lists the asset's first state again, exactly as it was.
		sim.updateAsset(assetId, { site: 'Austin Campus' });
		sim.restamp('asset', assetId, first.updatedAt);
		await pollUntilQuiet(polling, bed);
		expectEachOnce(
			polling,
			[
				...[issued, unread].flatMap(({ invoiceNumber }) => [
					`invoice.issued:${invoiceNumber}`,
					`invoice.paid:${invoiceNumber}`,
				]),
				...[first, second].map((asset) => `asset.updated:${assetId}:${asset.updatedAt}`),
			],
			withoutDigest,
		);
	});

	test(`the state bound holds for every read: 25,000 aged changes drain with at most ${STATE_BOUND.toLocaleString('en')} states stored, in windows wider than a second`, async () => {
		const bed = bedOf();
		const { sim } = bed;
		const polling = trigger(bed, ['invoice.issued'], 2000);
		await polling.activate();
		const expected: string[] = [];
		for (let minute = 0; minute < 25; minute++) {
			sim.clock.advance(MINUTE);
			expected.push(...issueMany(bed, 1000));
		}
		sim.clock.advance(2 * LISTED_WITHIN);
		// As slow as over HTTPS through n8n: a window of them all is read over several polls.
		sim.faults.add({ route: 'invoices.list', latencyMs: 100 });
		const most: number[] = [];
		for (let poll = 0; poll < 200 && polling.executions.flat().length < expected.length; poll++) {
			itemsOf(await polling.poll());
			most.push(Math.max(...storedStates(polling)));
		}
		expect(Math.max(...most)).toBeLessThanOrEqual(STATE_BOUND);
		const narrow = sim.log
			.entries({ route: 'invoices.list' })
			.filter((entry) => typeof entry.query.updatedTo === 'string')
			.filter(
				(entry) =>
					Date.parse(String(entry.query.updatedTo)) - Date.parse(String(entry.query.updatedFrom)) <
					1000,
			);
		expect(narrow).toHaveLength(0);
		await pollUntilQuiet(polling, bed);
		expectEachOnce(polling, expected);
	});

	test('a clock that jumped: a settle window planned by a service time 10 minutes off is narrowed to what the service’s answer allows; each change once, those listed late too', async () => {
		const bed = bedOf();
		const { sim } = bed;
		const polling = trigger(bed, ['invoice.issued', 'invoice.paid']);
		await polling.activate();
		sim.clock.advance(MINUTE);
		const issued = issueMany(bed, 60);
		const paid: string[] = [];
		const payOneAPoll = async (polls: number) => {
			for (let poll = 0; poll < polls; poll++) {
				const number = issued[paid.length].replace('invoice.issued:', '');
				sim.payInvoice(number);
				paid.push(`invoice.paid:${number}`);
				itemsOf(await polling.poll());
				// A minute passes for n8n and the service alike: the offset n8n keeps stays true.
				await bed.time.advance(MINUTE);
			}
		};
		await payOneAPoll(6);
		// n8n's clock stepped 10 minutes forward: the offset to the service's clock it kept is off.
		polling.editStaticData((data) => {
			const kinds = data.pollState as Record<string, { clockOffset: number }>;
			for (const kind of Object.values(kinds)) kind.clockOffset += 10 * MINUTE;
		});
		// Payments listed 4 minutes late (within the contract): a settle read too early loses them.
		sim.data.setListingLag(() => 4 * MINUTE);
		await payOneAPoll(10);
		await pollUntilQuiet(polling, bed);
		expectEachOnce(polling, [...issued, ...paid]);
	});

	test('a record stamped into a span being settled (a writer far behind, a replica behind) moves the others onto pages read already: those are read again; each change once', async () => {
		const bed = bedOf();
		const { sim } = bed;
		const polling = trigger(bed, ['invoice.issued'], 1000);
		await polling.activate();
		sim.clock.advance(MINUTE);
		const expected = issueMany(bed, 2000);
		const burst = sim.clock.now().getTime();
		sim.clock.advance(2 * LISTED_WITHIN);
		sim.faults.add({ route: 'invoices.list', latencyMs: 300 });
		itemsOf(await polling.poll());
		// An invoice from before the trigger comes into the span, ahead of the others in the list.
		const [oldest] = sim.data.invoices();
		sim.restamp('invoice', oldest.invoiceNumber, stampOf(burst));
		await pollUntilQuiet(polling, bed);
		expectEachOnce(polling, expected);
	});

	test('a baseline read over several polls while records listed at the start leave it: the others it was moving are still taken for listed at the start, never reported as issued', async () => {
		const bed = bedOf();
		const { sim } = bed;
		sim.setListShape({ order: 'updatedAt' });
		const polling = trigger(bed, ['invoice.issued', 'invoice.paid'], 1000);
		// Interleaved: invoices dated 10 days back (never reported as issued) and recent ones.
		const old = stampOf(sim.clock.now().getTime() - 10 * 24 * HOUR);
		const leaving = Array.from({ length: 600 }, () => {
			sim.issueInvoice();
			return sim.issueInvoice({ issueDate: old }).invoice.invoiceNumber;
		});
		sim.clock.advance(MINUTE);
		sim.faults.add({ route: 'invoices.list', latencyMs: 300 });
		await polling.activate();
		sim.clock.advance(2000);
		// Paid while the baseline is still being read: each leaves its place in the list.
		for (const number of leaving) sim.payInvoice(number);
		await pollUntilQuiet(polling, bed);
		expectEachOnce(
			polling,
			leaving.map((number) => `invoice.paid:${number}`),
		);
	});
});
