import type { Agent } from 'undici';

import { paths, type Asset, type Invoice } from '../../../nodes/InvoicingAssets/transport/contract';
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
	test('paying, cancelling, updating and retiring move updatedAt on, even within one second', async () => {
		const invoice = sim.issueInvoice().invoice;
		const paid = sim.payInvoice(invoice.invoiceNumber);
		expect(paid.invoice).toMatchObject({ status: 'paid', invoiceNumber: invoice.invoiceNumber });
		expect(paid.invoice.updatedAt > invoice.updatedAt).toBe(true);
		expect(paid.event.eventType).toBe('invoice.paid');
		expect(sim.data.invoice(invoice.invoiceNumber)).toEqual(paid.invoice);

		const other = sim.issueInvoice().invoice;
		const cancelled = sim.cancelInvoice(other.invoiceNumber).invoice;
		expect(cancelled).toMatchObject({ status: 'cancelled', dueDate: null });
		expect(cancelled.updatedAt > other.updatedAt).toBe(true);

		const asset = activeAsset();
		const updated = sim.updateAsset(asset.assetId).asset;
		expect(updated.site).not.toBe(asset.site);
		const again = sim.updateAsset(asset.assetId, { status: 'inactive' }).asset;
		expect(again).toMatchObject({ status: 'inactive', site: updated.site });
		expect(again.updatedAt > updated.updatedAt).toBe(true);
		const retired = sim.retireAsset(asset.assetId);
		expect(retired.asset.status).toBe('retired');
		expect(retired.event.eventType).toBe('asset.retired');
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
		expect(() => sim.updateAsset(asset.assetId)).toThrow(/is retired/);
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
