/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';

import { paths } from '../../../nodes/InvoicingAssets/transport/contract';
import { CA_DIR_ENV, startSimulator } from '../../simulator';
import { call, createAgent } from './helpers';

test('a taken port fails the start, or is replaced by a free one with fallbackToFreePorts', async () => {
	const blocker = createServer();
	await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
	const busy = (blocker.address() as AddressInfo).port;
	try {
		const ports = { service: busy };
		await expect(startSimulator({ invoices: 1, assets: 1, ports })).rejects.toMatchObject({
			code: 'EADDRINUSE',
		});
		const sim = await startSimulator({ invoices: 1, assets: 1, ports, fallbackToFreePorts: true });
		expect(new URL(sim.serviceUrl).port).not.toBe(String(busy));
		await sim.close();
	} finally {
		await new Promise((resolve) => blocker.close(resolve));
	}
});

test('on its own the simulator makes a CA in a temporary folder; close stops every listener, removes the folder and may be called again', async () => {
	const saved = process.env[CA_DIR_ENV];
	delete process.env[CA_DIR_ENV];
	try {
		const sim = await startSimulator({ invoices: 1, assets: 1 });
		expect(sim.caDir).not.toBe(saved);
		const agent = createAgent(sim);
		expect((await call(agent, `${sim.serviceUrl}${paths.invoices}`)).status).toBe(401);
		await Promise.all([sim.close(), sim.close()]);
		await sim.close();
		expect(existsSync(sim.caDir)).toBe(false);
		for (const url of [sim.identityUrl, sim.serviceUrl, sim.controlUrl]) {
			await expect(call(agent, url)).rejects.toThrow(/ECONNREFUSED|connect/);
		}
		await agent.close();
	} finally {
		if (saved !== undefined) process.env[CA_DIR_ENV] = saved;
	}
});
