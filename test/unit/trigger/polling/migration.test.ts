/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/**
 * The state 0.1.0 (c08b584) stores, read by this version (issue 38). The fixture is a real one,
 * captured from the old code polling the simulator mid-settle: the node's static data, the
 * eventIds it had reported, and the records the service held then. Polled on from there by the
 * new core, nothing the old code reported comes again, every change since its start comes once,
 * and what is stored afterwards has the new form.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { IDataObject } from 'n8n-workflow';

import type { Asset, Invoice } from '../../../../nodes/InvoicingAssets/transport/contract';
import { InProcessTrigger, N8N_DEFAULT_POLL_BUDGET_MS } from '../../../harness/in-process-poller';
import {
	allEventIds,
	expectEachOnce,
	issueMany,
	MINUTE,
	pollUntilQuiet,
} from '../../../harness/polled-events';
import { VirtualTime } from '../../../harness/virtual-time';
import { toServiceTimestamp } from '../../../simulator/contract';
import { InMemoryService } from '../../../simulator/in-memory';

interface CapturedState {
	commit: string;
	/** The service's time when the state was captured. */
	serviceNow: string;
	staticData: IDataObject & { pollState: Record<'invoice' | 'asset', IDataObject> };
	reported: string[];
	invoices: Invoice[];
	assets: Asset[];
}

const captured = JSON.parse(
	readFileSync(join(__dirname, 'fixtures/c08b584-poll-state.json'), 'utf8'),
) as CapturedState;

/** The change an eventId stands for: an asset update is named by its stamp (0.1.0 had digests of its own). */
const changeOf = (eventId: string) => eventId.replace(/^(asset\.updated:.+):[0-9a-f]+$/, '$1');

const iso = (ms: number) => toServiceTimestamp(new Date(ms));

/** Every change of the records since `start`: the invoices issued since, their statuses, the assets changed. */
function changesSince(start: number, invoices: readonly Invoice[], assets: readonly Asset[]) {
	const since = iso(start);
	const changes: string[] = [];
	for (const { invoiceNumber, issueDate, status } of invoices) {
		if (issueDate < since) continue;
		changes.push(`invoice.issued:${invoiceNumber}`);
		if (status !== 'issued') changes.push(`invoice.${status}:${invoiceNumber}`);
	}
	for (const { assetId, status, updatedAt } of assets) {
		if (updatedAt < since) continue;
		changes.push(
			status === 'retired' ? `asset.retired:${assetId}` : `asset.updated:${assetId}:${updatedAt}`,
		);
	}
	return changes;
}

/** What 0.1.0 stored that this version no longer does: `final`, `steady`, `probed`, 12-digit digests. */
function oldFormsIn(staticData: IDataObject): string[] {
	const json = JSON.stringify(staticData);
	const names = ['final', 'steady', 'probed'].filter((name) => json.includes(`"${name}":`));
	return [...names, ...(json.match(/ [0-9a-f]{12}"/g) ?? [])];
}

test('a state stored by 0.1.0 (c08b584) mid-settle is read on: nothing it reported comes again, every change since its start once, the state stored in the new form', async () => {
	const { pollState } = captured.staticData;
	const start = Number(pollState.invoice.start);
	const offset = Number(pollState.invoice.clockOffset);
	const serviceNow = Date.parse(captured.serviceNow);
	// n8n's clock and the service's as the old trigger last knew them, and the records of then.
	const time = new VirtualTime(serviceNow - offset);
	const sim = new InMemoryService(time, { invoices: 0, assets: 0, clockOffsetMs: offset });
	sim.load(captured);
	const bed = { time, sim };
	expect(sim.clock.now().getTime()).toBe(serviceNow);
	const oldSettle = pollState.invoice.settle as { from: number; to: number; nextPage: number };
	expect(oldFormsIn(captured.staticData)).toEqual(expect.arrayContaining(['final', 'steady']));

	// n8n starts with the new version installed. Its first poll has little time: what it stores
	// is the state mid-settle, the old records' states kept, in the new form.
	const polling = new InProcessTrigger(bed, { staticData: captured.staticData, budgetMs: 1 });
	await polling.activate();
	const midSettle = (polling.savedStaticData().pollState as Record<string, IDataObject>).invoice;
	const seen = Object.values(midSettle.seen as Record<string, string[]>).flat();
	expect(seen.length).toBeGreaterThanOrEqual(100);
	expect(seen.filter((key) => !/^\S+ [0-9a-f]{8}$/.test(key))).toEqual([]);
	expect([midSettle.final, (midSettle.settle as IDataObject).nextPage]).toEqual([undefined, 3]);
	expect(Object.values(midSettle.statuses as IDataObject).flat()).toContain('paid INV-0000011');
	polling.budgetMs = N8N_DEFAULT_POLL_BUDGET_MS;
	await pollUntilQuiet(polling, bed);

	// Changes after the upgrade, also to records 0.1.0 reported: a paid invoice edited (no event),
	// a retired asset edited (an update, not retired again).
	sim.clock.advance(MINUTE);
	const later = issueMany(bed, 3);
	sim.payInvoice('INV-0000200');
	sim.cancelInvoice('INV-0000201');
	sim.editInvoice('INV-0000011');
	const updated = sim.updateAsset('AST-000005').asset;
	const editedRetired = sim.updateAsset('AST-000004').asset;
	sim.retireAsset('AST-000006');
	later.push(
		'invoice.paid:INV-0000200',
		'invoice.cancelled:INV-0000201',
		`asset.updated:AST-000005:${updated.updatedAt}`,
		`asset.updated:AST-000004:${editedRetired.updatedAt}`,
		'asset.retired:AST-000006',
	);
	await pollUntilQuiet(polling, bed);

	const before = changesSince(start, captured.invoices, captured.assets);
	const reported = new Set(captured.reported.map(changeOf));
	expect([...reported].filter((change) => !before.includes(change))).toEqual([]);
	expect(before.length - reported.size).toBeGreaterThan(200);
	// Across old and new, each change once: what 0.1.0 reported is not reported again.
	expectEachOnce(
		polling,
		[...before, ...later].filter((change) => !reported.has(change)),
		changeOf,
	);
	expect(
		allEventIds(polling)
			.map(changeOf)
			.filter((change) => reported.has(change)),
	).toEqual([]);
	expect(oldFormsIn(polling.savedStaticData())).toEqual([]);
	// The window 0.1.0 left read on down from its next page, its first page once more at the end.
	const oldWindow = { updatedFrom: iso(oldSettle.from), updatedTo: iso(oldSettle.to) };
	const pages = sim.log
		.entries({ route: 'invoices.list' })
		.filter(
			({ query }) =>
				query.updatedFrom === oldWindow.updatedFrom && query.updatedTo === oldWindow.updatedTo,
		)
		.map(({ query }) => Number(query.page));
	expect(pages[0]).toBe(oldSettle.nextPage);
	expect([...pages].sort()).toEqual([1, 2, 3, 4]);
});
