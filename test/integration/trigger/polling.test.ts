import type { IDataObject } from 'n8n-workflow';

import { MAX_PAGE_SIZE } from '../../../nodes/InvoicingAssets/transport/contract';
import { startTestbed, type Testbed } from '../../harness/testbed';
import {
	allEventIds,
	assetIds as openAssets,
	itemsOf,
	jsonOf,
	keys,
	MINUTE,
	pollingWorkflow,
	withTestbed,
} from './polling-helpers';

let testbed: Testbed;

beforeAll(async () => {
	testbed = await startTestbed({ invoices: 30, assets: 20 });
});

afterAll(async () => {
	await testbed.close();
});

afterEach(() => {
	testbed.sim.faults.clear();
});

function workflow(events: string[] = ['*'], bed: Testbed = testbed) {
	return pollingWorkflow(bed, events);
}

function assetIds(count: number): string[] {
	return openAssets(testbed, count);
}

describe('Polling Trigger', () => {
	test('the first poll takes a baseline and starts nothing; later changes start it once each, in the webhook shape', async () => {
		const { sim } = testbed;
		const before = sim.issueInvoice().invoice;
		sim.payInvoice(before.invoiceNumber);
		const polling = workflow();

		expect(await polling.activate()).toBeNull();
		expect(polling.savedStaticData()).toHaveProperty('pollState.invoice.settled');
		expect(itemsOf(await polling.poll())).toEqual([]);

		sim.clock.advance(MINUTE);
		const issued = sim.issueInvoice().invoice;
		const items = itemsOf(await polling.poll());
		expect(items).toEqual([
			{
				eventId: `invoice.issued:${issued.invoiceNumber}`,
				eventType: 'invoice.issued',
				occurredAt: issued.issueDate,
				subscriptionId: null,
				data: { ...issued },
			},
		]);
		expect(itemsOf(await polling.poll())).toEqual([]);

		sim.clock.advance(MINUTE);
		const paid = sim.payInvoice(issued.invoiceNumber).invoice;
		expect(itemsOf(await polling.poll())).toEqual([
			{
				eventId: `invoice.paid:${paid.invoiceNumber}`,
				eventType: 'invoice.paid',
				occurredAt: paid.updatedAt,
				subscriptionId: null,
				data: { ...paid },
			},
		]);
		expect(itemsOf(await polling.poll())).toEqual([]);
	});

	test('an invoice issued and paid or cancelled between two polls gives both events; assets give updated and retired', async () => {
		const { sim } = testbed;
		const polling = workflow();
		await polling.activate();
		sim.clock.advance(MINUTE);
		const paid = sim.issueInvoice().invoice.invoiceNumber;
		const cancelled = sim.issueInvoice().invoice.invoiceNumber;
		sim.clock.advance(1000);
		sim.payInvoice(paid);
		sim.cancelInvoice(cancelled);
		const [updated, retired] = assetIds(2);
		sim.updateAsset(updated);
		const retiredAsset = sim.retireAsset(retired).asset;

		const items = itemsOf(await polling.poll());
		expect(keys(items).sort()).toEqual(
			[
				`invoice.issued:${paid}`,
				`invoice.issued:${cancelled}`,
				`invoice.paid:${paid}`,
				`invoice.cancelled:${cancelled}`,
				`asset.updated:${updated}`,
				`asset.retired:${retired}`,
			].sort(),
		);
		const occurred = items.map((item) => String(item.occurredAt));
		expect(occurred).toEqual([...occurred].sort());
		expect(items.find((item) => item.eventType === 'asset.retired')).toMatchObject({
			eventId: `asset.retired:${retired}`,
			data: { ...retiredAsset },
		});
		const update = items.find((item) => item.eventType === 'asset.updated') as IDataObject;
		expect(update.eventId).toMatch(
			new RegExp(
				`^asset\\.updated:${updated}:${String((update.data as IDataObject).updatedAt)}:[0-9a-f]{8}$`,
			),
		);
		expect(itemsOf(await polling.poll())).toEqual([]);
	});

	test('only the selected events start the workflow', async () => {
		const { sim } = testbed;
		const polling = workflow(['invoice.paid', 'asset.retired']);
		await polling.activate();
		sim.clock.advance(MINUTE);
		const issuedOnly = sim.issueInvoice().invoice.invoiceNumber;
		const paid = sim.issueInvoice().invoice.invoiceNumber;
		sim.payInvoice(paid);
		const [updated, retired] = assetIds(2);
		sim.updateAsset(updated);
		sim.retireAsset(retired);
		const items = itemsOf(await polling.poll());
		expect(keys(items).sort()).toEqual([`asset.retired:${retired}`, `invoice.paid:${paid}`]);
		expect(keys(items).join()).not.toContain(issuedOnly);
	});

	test('changes in the same second as the last poll, written after it, are reported once', async () => {
		const { sim } = testbed;
		const polling = workflow(['invoice.issued']);
		await polling.activate();
		sim.clock.advance(MINUTE);
		const reported: string[] = [];
		for (let round = 0; round < 5; round++) {
			// No clock advance: every invoice of these rounds has the same updatedAt second (mostly).
			for (let i = 0; i < 3; i++) reported.push(sim.issueInvoice().invoice.invoiceNumber);
			await polling.poll();
		}
		const ids = allEventIds(polling);
		expect(ids.sort()).toEqual(reported.map((number) => `invoice.issued:${number}`).sort());
		expect(new Set(ids).size).toBe(ids.length);
	});

	test('several pages of changes after a long pause come in one poll, each once, with one request per page and at most two more', async () => {
		const { sim } = testbed;
		const polling = workflow(['invoice.issued', 'invoice.paid']);
		await polling.activate();
		const expected: string[] = [];
		for (let day = 0; day < 3; day++) {
			sim.clock.advance(24 * 60 * MINUTE);
			for (let i = 0; i < 90; i++) {
				const number = sim.issueInvoice().invoice.invoiceNumber;
				expected.push(`invoice.issued:${number}`);
				if (i % 3 === 0) {
					sim.payInvoice(number);
					expected.push(`invoice.paid:${number}`);
				}
			}
		}
		sim.log.reset();
		const items = itemsOf(await polling.poll());
		expect(items.map((item) => item.eventId).sort()).toEqual(expected.sort());
		const from = String(sim.log.entries({ route: 'invoices.list' })[0].query.updatedFrom);
		const inWindow = sim.data.invoices().filter((invoice) => invoice.updatedAt >= from).length;
		expect(inWindow).toBeGreaterThanOrEqual(270);
		// Three days on, the token has expired too: one request is refused (401) and sent again.
		// The service's clock jumped 3 days since the last poll: a first page planned by the clock
		// the trigger knew shows the backlog is days old; it is then read once, by one settle
		// window, and the last minutes' changes by a follow window.
		expect(sim.log.count('invoices.list', { status: 200 })).toBeLessThanOrEqual(
			Math.ceil(inWindow / MAX_PAGE_SIZE) + 2,
		);
		expect(itemsOf(await polling.poll())).toEqual([]);
	});

	// Only the HTTP path proves these: n8n's helpers under the transport's retry and token renewal.
	// n8n's default budget (a poll takes 30 s of it at most), far above their second; counts, not times.
	test('a 429 with Retry-After and a 503 on list pages in the middle of a poll are retried by the transport within the poll: it reports every change once', async () => {
		const { sim } = testbed;
		const polling = workflow(['invoice.issued']);
		await polling.activate();
		sim.clock.advance(MINUTE);
		const expected = Array.from(
			{ length: 250 },
			() => `invoice.issued:${sim.issueInvoice().invoice.invoiceNumber}`,
		);
		sim.log.reset();
		// The poll's first page answers; a later page meets a 429, and another a 503.
		sim.faults.add({ route: 'invoices.list', status: 429, retryAfter: 1, skip: 1, times: 1 });
		sim.faults.add({ route: 'invoices.list', status: 503, skip: 2, times: 1 });

		expect(keys(itemsOf(await polling.poll())).sort()).toEqual([...expected].sort());
		const lists = sim.log.entries({ route: 'invoices.list' });
		const refused = lists.filter((entry) => entry.status !== 200);
		expect(refused.map((entry) => entry.status).sort()).toEqual([429, 503]);
		// Each page refused is asked for again (its retry may meet the other fault) until answered.
		const query = (entry: (typeof lists)[number]) => JSON.stringify(entry.query);
		for (const page of new Set(refused.map(query))) {
			const answers = lists.filter((entry) => query(entry) === page);
			expect(answers.at(-1)?.status).toBe(200);
		}
		expect(itemsOf(await polling.poll())).toEqual([]);
	});

	test('a token that expires while a poll reads its pages is renewed once by the transport, and the poll goes on: every change once', async () => {
		let listRequested = () => {};
		const onRequest = ({ route }: { route: string }) => {
			if (route === 'invoices.list') listRequested();
		};
		await withTestbed({ onRequest }, async (bed) => {
			const { sim } = bed;
			const polling = workflow(['invoice.issued'], bed);
			await polling.activate();
			// The token the activation obtained expires within the hour from here.
			const expiresBy = sim.clock.now().getTime() + 60 * MINUTE;
			sim.clock.advance(59 * MINUTE);
			const expected = Array.from(
				{ length: 250 },
				() => `invoice.issued:${sim.issueInvoice().invoice.invoiceNumber}`,
			);
			sim.log.reset();
			// The poll's first list request goes with the token; its second arrives once it expired.
			let lists = 0;
			listRequested = () => {
				lists += 1;
				if (lists === 2)
					sim.clock.advance(Math.max(0, expiresBy + 1000 - sim.clock.now().getTime()));
			};

			expect(keys(itemsOf(await polling.poll())).sort()).toEqual([...expected].sort());
			const statuses = sim.log.entries({ route: 'invoices.list' }).map((entry) => entry.status);
			expect([statuses[0], statuses[1]]).toEqual([200, 401]);
			expect(statuses.filter((status) => status === 401)).toHaveLength(1);
			expect(sim.log.tokensIssued()).toBe(1);
			expect(itemsOf(await polling.poll())).toEqual([]);
		});
	});

	test('a poll that fails half way reports what it read, keeps its place, and the next poll reports the rest, each once', async () => {
		const { sim } = testbed;
		const polling = workflow(['invoice.issued']);
		await polling.activate();
		sim.clock.advance(MINUTE);
		const expected = Array.from(
			{ length: 150 },
			() => `invoice.issued:${sim.issueInvoice().invoice.invoiceNumber}`,
		);
		// The first page answers; the second fails, and is not retried (400).
		sim.faults.add({ route: 'invoices.list', status: 400, skip: 1, times: 1 });

		const first = itemsOf(await polling.poll());
		expect(first.length).toBeGreaterThan(0);
		expect(first.length).toBeLessThan(expected.length);
		const rest = itemsOf(await polling.poll());
		expect([...first, ...rest].map((item) => item.eventId).sort()).toEqual([...expected].sort());
		expect(itemsOf(await polling.poll())).toEqual([]);
	});

	test('when the assets fail after the invoices were read, the invoices are reported and the assets follow with the next poll; a poll with nothing to report shows the error', async () => {
		const { sim } = testbed;
		const polling = workflow(['*']);
		await polling.activate();
		sim.clock.advance(MINUTE);
		const number = sim.issueInvoice().invoice.invoiceNumber;
		const [assetId] = assetIds(1);
		const asset = sim.updateAsset(assetId).asset;
		sim.faults.add({ route: 'assets.list', status: 400, times: 1 });
		expect(itemsOf(await polling.poll()).map((item) => item.eventId)).toEqual([
			`invoice.issued:${number}`,
		]);
		const [update] = itemsOf(await polling.poll());
		expect(update.eventId).toMatch(`asset.updated:${assetId}:${asset.updatedAt}:`);

		sim.faults.add({ route: 'assets.list', status: 400, times: 1 });
		const failed = await polling.poll();
		expect('error' in failed && failed.error.message).toMatch(/invalid/i);
		expect(itemsOf(await polling.poll())).toEqual([]);
	});

	test('a failure while the invoices are read keeps the assets where they were: their changes come with the next polls, each once', async () => {
		const { sim } = testbed;
		const polling = workflow(['*']);
		await polling.activate();
		sim.clock.advance(MINUTE);
		const [assetId] = assetIds(1);
		const asset = sim.updateAsset(assetId).asset;
		const expected = [
			`asset.updated:${assetId}:${asset.updatedAt}`,
			...Array.from(
				{ length: 150 },
				() => `invoice.issued:${sim.issueInvoice().invoice.invoiceNumber}`,
			),
		];
		// The invoices are read first; their second page fails (400), before the assets are read.
		sim.faults.add({ route: 'invoices.list', status: 400, skip: 1, times: 1 });
		expect(itemsOf(await polling.poll()).length).toBeGreaterThan(0);
		for (let poll = 0; poll < 3; poll++) {
			sim.clock.advance(6 * MINUTE);
			await polling.poll();
		}
		const reported = allEventIds(polling).map((id) =>
			id.replace(/^(asset\.updated:.+):[0-9a-f]{8}$/, '$1'),
		);
		expect(reported.sort()).toEqual(expected.sort());
	});

	test('a page that does not add up fails where it was: the changes read before it are reported, the next poll goes on at that page; a poll with nothing read fails', async () => {
		const { sim } = testbed;
		const polling = workflow(['invoice.issued']);
		await polling.activate();
		sim.clock.advance(MINUTE);
		const expected = Array.from(
			{ length: 150 },
			() => `invoice.issued:${sim.issueInvoice().invoice.invoiceNumber}`,
		);
		// A second page that lost its records on the way (as if they had moved to page 1).
		const shortPage = { items: [], page: 2, pageSize: MAX_PAGE_SIZE, totalItems: 150 };
		sim.faults.add({ route: 'invoices.list', status: 200, body: shortPage, skip: 1, times: 1 });
		const first = itemsOf(await polling.poll());
		expect(first).toHaveLength(MAX_PAGE_SIZE);
		const rest = itemsOf(await polling.poll());
		expect([...first, ...rest].map((item) => item.eventId)).toEqual(expected);

		sim.clock.advance(MINUTE);
		const later = `invoice.issued:${sim.issueInvoice().invoice.invoiceNumber}`;
		const saved = JSON.stringify(polling.savedStaticData());
		sim.faults.add({ route: 'invoices.list', status: 200, body: shortPage });
		const failed = await polling.poll();
		expect('error' in failed && failed.error.message).toMatch(/pages do not add up/);
		expect(JSON.stringify(polling.savedStaticData())).toBe(saved);
		sim.faults.clear();
		expect(itemsOf(await polling.poll()).map((item) => item.eventId)).toEqual([later]);
	});

	test('nothing is lost or repeated across n8n restarts, including a restart that loses unsaved progress', async () => {
		const { sim } = testbed;
		const polling = workflow(['invoice.issued', 'invoice.paid']);
		await polling.activate();
		const expected: string[] = [];
		const issue = () => {
			const number = sim.issueInvoice().invoice.invoiceNumber;
			expected.push(`invoice.issued:${number}`);
			return number;
		};
		sim.clock.advance(MINUTE);
		const first = issue();
		await polling.poll();
		sim.clock.advance(MINUTE);
		await polling.poll(); // nothing new: progress kept in memory only
		await polling.restart();
		sim.clock.advance(MINUTE);
		sim.payInvoice(first);
		expected.push(`invoice.paid:${first}`);
		issue();
		await polling.restart(); // the activation poll of the restart reports the changes
		sim.clock.advance(10 * MINUTE);
		issue();
		await polling.poll();
		await polling.restart();
		await polling.poll();

		const ids = allEventIds(polling);
		expect(ids.sort()).toEqual(expected.sort());
	});

	test.each([
		['ahead of', 3 * MINUTE],
		['behind', -3 * MINUTE],
	])(
		'with the service’s clock 3 minutes %s n8n’s, no change is lost or repeated',
		async (_, offsetMs) => {
			await withTestbed({ clockOffsetMs: offsetMs }, async (bed) => {
				const { sim } = bed;
				const before = sim.issueInvoice().invoice.invoiceNumber;
				const polling = workflow(['invoice.issued', 'invoice.paid'], bed);
				await polling.activate();
				const expected = [`invoice.paid:${before}`];
				sim.clock.advance(1000);
				sim.payInvoice(before);
				for (let i = 0; i < 4; i++) {
					expected.push(`invoice.issued:${sim.issueInvoice().invoice.invoiceNumber}`);
					await polling.poll();
				}
				await polling.poll();
				expect(allEventIds(polling).sort()).toEqual(expected.sort());
			});
		},
	);

	test('Fetch Test Event returns the newest matching record and leaves the position alone', async () => {
		const { sim } = testbed;
		const polling = workflow(['invoice.paid']);
		await polling.activate();
		const saved = JSON.stringify(polling.savedStaticData());
		sim.clock.advance(MINUTE);
		const older = sim.issueInvoice().invoice.invoiceNumber;
		const newer = sim.issueInvoice().invoice.invoiceNumber;
		sim.payInvoice(older);
		sim.clock.advance(5000);
		const newest = sim.payInvoice(newer).invoice;
		sim.clock.advance(1000);
		sim.issueInvoice();

		expect(jsonOf(await polling.fetchTestEvent())).toEqual([
			{
				eventId: `invoice.paid:${newer}`,
				eventType: 'invoice.paid',
				occurredAt: newest.updatedAt,
				subscriptionId: null,
				data: { ...newest },
			},
		]);
		expect(JSON.stringify(polling.savedStaticData())).toBe(saved);
	});

	test('Fetch Test Event asks for one page at a time, at most five per record kind, however many records the service holds', async () => {
		await withTestbed({ invoices: 1050, assets: 300 }, async (bed) => {
			const { sim } = bed;
			// 300 invoices issued just now, none cancelled: only the seeded ones of 2024 and 2025 are.
			for (let i = 0; i < 300; i++) sim.issueInvoice();
			sim.log.reset();
			const polling = workflow(['invoice.cancelled'], bed);
			const [event] = jsonOf(await polling.fetchTestEvent());
			expect(event).toMatchObject({ eventType: 'invoice.cancelled' });
			const lists = sim.log.entries({ route: 'invoices.list' });
			expect(lists.every((entry) => entry.query.page === '1')).toBe(true);
			expect(lists.length).toBeLessThanOrEqual(1 + 4);
		});
	});

	test('an idle poll costs one list request per record kind', async () => {
		const { sim } = testbed;
		const polling = workflow(['*']);
		await polling.activate();
		await polling.poll();
		sim.log.reset();
		expect(itemsOf(await polling.poll())).toEqual([]);
		expect(sim.log.countsByRoute()).toEqual({ 'invoices.list': 1, 'assets.list': 1 });
	});

	test('a selection without any event fails with a clear error', async () => {
		const polling = workflow([]);
		await expect(polling.activate()).rejects.toThrow('No event is selected');
	});
});
