import type { Agent } from 'undici';

import {
	paths,
	toServiceTimestamp,
	type Asset,
	type Invoice,
} from '../../../nodes/InvoicingAssets/transport/contract';
import { startSimulator, type Simulator } from '../../simulator';
import { ControlApiError, SimulatorControlClient } from '../../simulator/control-client';
import { call, createAgent, fetchToken } from './helpers';

let sim: Simulator;
let agent: Agent;
let token: string;
let control: SimulatorControlClient;

beforeAll(async () => {
	sim = await startSimulator({ invoices: 40, assets: 20 });
	agent = createAgent(sim);
	token = await fetchToken(agent, sim);
	control = new SimulatorControlClient(sim.controlUrl);
});

afterAll(async () => {
	await control.close();
	await agent.close();
	await sim.close();
});

const list = async (path: string, query: Record<string, string>) =>
	await call(
		agent,
		`${sim.serviceUrl}${path}?${new URLSearchParams({ pageSize: '100', ...query })}`,
		{
			token,
		},
	);

const openInvoice = () =>
	sim.data.invoices().find((invoice) => invoice.status === 'issued') as Invoice;
const activeAsset = () => sim.data.assets().find((asset) => asset.status !== 'retired') as Asset;

describe('records that change', () => {
	test('paying, cancelling, editing, updating and retiring stamp the change’s second: two changes within one second share it', async () => {
		const invoice = sim.issueInvoice().invoice;
		sim.clock.advance(1000);
		const paid = sim.payInvoice(invoice.invoiceNumber);
		expect(paid.invoice).toMatchObject({ status: 'paid', invoiceNumber: invoice.invoiceNumber });
		expect(paid.invoice.updatedAt > invoice.updatedAt).toBe(true);
		expect(paid.event.eventType).toBe('invoice.paid');
		expect(sim.data.invoice(invoice.invoiceNumber)).toEqual(paid.invoice);
		const edited = sim.editInvoice(invoice.invoiceNumber);
		expect(edited.status).toBe('paid');
		expect(Date.parse(edited.dueDate as string) - Date.parse(paid.invoice.dueDate as string)).toBe(
			7 * 24 * 60 * 60_000,
		);

		const other = sim.issueInvoice().invoice;
		sim.clock.advance(1000);
		const cancelled = sim.cancelInvoice(other.invoiceNumber).invoice;
		expect(cancelled).toMatchObject({ status: 'cancelled', dueDate: null });
		expect(cancelled.updatedAt > other.updatedAt).toBe(true);
		expect(sim.editInvoice(other.invoiceNumber).totalAmount).toBe(
			Math.round((cancelled.totalAmount + 1) * 100) / 100,
		);

		const asset = activeAsset();
		const before = toServiceTimestamp(sim.clock.now());
		const updated = sim.updateAsset(asset.assetId).asset;
		const twice = sim.updateAsset(asset.assetId, {
			site: updated.site === 'Berlin HQ' ? 'Zurich Lab' : 'Berlin HQ',
		}).asset;
		const after = toServiceTimestamp(sim.clock.now());
		expect(updated.site).not.toBe(asset.site);
		// Stamped with the simulated second: within one second, both changes carry it.
		expect([before, after]).toContain(updated.updatedAt);
		expect([before, after]).toContain(twice.updatedAt);
		if (before === after) expect(twice.updatedAt).toBe(updated.updatedAt);
		const again = sim.updateAsset(asset.assetId, { status: 'inactive' }).asset;
		expect(again).toMatchObject({ status: 'inactive', site: twice.site });
		expect(again.updatedAt >= updated.updatedAt).toBe(true);
		const retired = sim.retireAsset(asset.assetId);
		expect(retired.asset.status).toBe('retired');
		expect(retired.event.eventType).toBe('asset.retired');
		// A retired asset may still be edited; it stays retired.
		const correction = sim.updateAsset(asset.assetId, { site: 'Vienna Office' });
		expect(correction.asset).toMatchObject({ status: 'retired', site: 'Vienna Office' });
		expect(correction.event.eventType).toBe('asset.updated');
	});

	test('changes that cannot happen are refused', () => {
		const invoice = sim.issueInvoice().invoice;
		sim.payInvoice(invoice.invoiceNumber);
		expect(() => sim.payInvoice(invoice.invoiceNumber)).toThrow(/is paid/);
		expect(() => sim.cancelInvoice(invoice.invoiceNumber)).toThrow(/is paid/);
		expect(() => sim.payInvoice('INV-9999999')).toThrow(/not found/);
		const asset = activeAsset();
		sim.retireAsset(asset.assetId);
		expect(() => sim.retireAsset(asset.assetId)).toThrow(/already retired/);
		expect(() => sim.updateAsset(asset.assetId, { status: 'active' })).toThrow(/is retired/);
		expect(() => sim.editInvoice('INV-9999999')).toThrow(/not found/);
		expect(() =>
			sim.updateAsset(activeAsset().assetId, { status: 'retired' as 'inactive' }),
		).toThrow(/retire with retire/);
	});

	test('updatedFrom and updatedTo bound updatedAt inclusively, for invoices and assets', async () => {
		sim.clock.advance(24 * 60 * 60_000);
		token = await fetchToken(agent, sim);
		const invoice = openInvoice();
		const paid = sim.payInvoice(invoice.invoiceNumber).invoice;
		sim.clock.advance(10_000);
		const issued = sim.issueInvoice().invoice;
		const asset = sim.updateAsset(activeAsset().assetId).asset;

		const fromPaid = await list(paths.invoices, { updatedFrom: paid.updatedAt });
		expect(fromPaid.json.items).toEqual([paid, issued]);
		const onlyPaid = await list(paths.invoices, {
			updatedFrom: paid.updatedAt,
			updatedTo: paid.updatedAt,
		});
		expect(onlyPaid.json.items).toEqual([paid]);
		const assets = await list(paths.assets, { updatedFrom: asset.updatedAt });
		expect(assets.json.items).toEqual([asset]);
		const untilBefore = await list(paths.assets, { updatedTo: '2000-01-01T00:00:00Z' });
		expect(untilBefore.json.items).toEqual([]);

		for (const path of [paths.invoices, paths.assets]) {
			const bad = await list(path, { updatedFrom: 'yesterday' });
			expect(bad.status).toBe(400);
			expect(bad.json.details).toEqual({ parameter: 'updatedFrom' });
			const reversed = await list(path, {
				updatedFrom: '2025-06-01T00:00:00Z',
				updatedTo: '2025-01-01T00:00:00Z',
			});
			expect(reversed.status).toBe(400);
			expect(reversed.json.details).toEqual({ parameter: 'updatedFrom' });
		}
	});

	test('every answer carries the simulated time in its Date header', async () => {
		sim.clock.advance(90 * 60_000);
		token = await fetchToken(agent, sim);
		const answer = await list(paths.invoices, { pageSize: '1' });
		const date = Date.parse(String(answer.headers.date));
		expect(Math.abs(date - sim.clock.now().getTime())).toBeLessThan(2000);
		expect(Math.abs(date - Date.now())).toBeGreaterThan(60 * 60_000);
	});

	test('lists answer in updatedAt order, or without totalItems, when a test asks; a changed record then moves to the end', async () => {
		sim.clock.advance(60_000);
		const first = sim.issueInvoice().invoice;
		sim.clock.advance(1000);
		const second = sim.issueInvoice().invoice;
		sim.clock.advance(1000);
		sim.payInvoice(first.invoiceNumber);
		const since = { updatedFrom: first.updatedAt };
		const numbers = async () =>
			((await list(paths.invoices, since)).json.items as Invoice[]).map(
				(invoice) => invoice.invoiceNumber,
			);
		expect(await numbers()).toEqual([first.invoiceNumber, second.invoiceNumber]);
		sim.setListShape({ order: 'updatedAt' });
		expect(await numbers()).toEqual([second.invoiceNumber, first.invoiceNumber]);
		sim.setListShape({ order: 'updatedAt-desc', totalItems: 'null' });
		const newestFirst = await list(paths.invoices, since);
		expect(newestFirst.json.totalItems).toBeNull();
		expect((newestFirst.json.items as Invoice[])[0].invoiceNumber).toBe(first.invoiceNumber);
		await control.setListShape({});
		expect((await list(paths.invoices, since)).json.totalItems).toBe(2);
	});

	test('a record restamped keeps its fields; lists filter its stamp by the moment it means', async () => {
		sim.clock.advance(60_000);
		const asset = activeAsset();
		const now = sim.clock.now();
		const local = new Date(now.getTime() - 2 * 60 * 60_000).toISOString().slice(0, 19);
		const restamped = sim.restamp('asset', asset.assetId, `${local}-02:00`, {
			deviation: 'an updatedAt with an offset',
		});
		expect(restamped).toEqual({ ...asset, updatedAt: `${local}-02:00` });
		const from = toServiceTimestamp(new Date(now.getTime() - 1000));
		const found = await list(paths.assets, { updatedFrom: from });
		expect((found.json.items as Asset[]).map((entry) => entry.assetId)).toContain(asset.assetId);
		expect(sim.contract.deviations().map((entry) => entry.reason)).toContain(
			'an updatedAt with an offset',
		);
		const { invoice } = await control.restamp(
			'invoice',
			openInvoice().invoiceNumber,
			'2099-01-01T00:00:00Z',
		);
		expect(invoice?.updatedAt).toBe('2099-01-01T00:00:00Z');
		const edited = await control.editInvoice(openInvoice().invoiceNumber, { totalAmount: 12.5 });
		expect(edited.invoice.totalAmount).toBe(12.5);
	});

	test('the control API pays, cancels, updates and retires', async () => {
		const first = (await control.issueInvoice()).invoice.invoiceNumber;
		const second = (await control.issueInvoice()).invoice.invoiceNumber;
		const paid = await control.changeInvoice(first, 'pay');
		expect(paid.invoice.status).toBe('paid');
		expect(paid.event.eventType).toBe('invoice.paid');
		expect((await control.changeInvoice(second, 'cancel')).invoice.status).toBe('cancelled');
		const asset = activeAsset().assetId;
		const updated = await control.changeAsset(asset, 'update', { changes: { site: 'Zurich Lab' } });
		expect(updated.asset).toMatchObject({ assetId: asset, site: 'Zurich Lab' });
		expect((await control.changeAsset(asset, 'retire')).event.eventType).toBe('asset.retired');
		await expect(control.changeInvoice(first, 'pay')).rejects.toBeInstanceOf(ControlApiError);
	});
});
