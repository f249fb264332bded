/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';

import { paths } from '../../../nodes/InvoicingAssets/transport/contract';
import { CA_DIR_ENV, startSimulator } from '../../simulator';
import { call, createAgent, fetchToken } from './helpers';

async function busyPort(): Promise<{ port: number; release: () => Promise<void> }> {
	const blocker = createServer();
	await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
	return {
		port: (blocker.address() as AddressInfo).port,
		release: () => new Promise((resolve) => blocker.close(() => resolve())),
	};
}

test('a taken port fails the start, or is replaced by a free one with fallbackToFreePorts', async () => {
	const busy = await busyPort();
	try {
		await expect(
			startSimulator({ invoices: 1, assets: 1, ports: { service: busy.port } }),
		).rejects.toMatchObject({
			code: 'EADDRINUSE',
		});
		const sim = await startSimulator({
			invoices: 1,
			assets: 1,
			ports: { service: busy.port },
			fallbackToFreePorts: true,
		});
		expect(new URL(sim.serviceUrl).port).not.toBe(String(busy.port));
		await sim.close();
	} finally {
		await busy.release();
	}
});

test('fixed ports are used when free; close stops every listener and is idempotent', async () => {
	const free = await busyPort();
	await free.release();
	const sim = await startSimulator({ invoices: 2, assets: 2, ports: { identity: free.port } });
	expect(sim.identityUrl).toBe(`https://localhost:${free.port}`);
	const agent = createAgent(sim);
	const token = await fetchToken(agent, sim);
	expect((await call(agent, `${sim.serviceUrl}${paths.invoices}`, { token })).status).toBe(200);
	await agent.close();
	await Promise.all([sim.close(), sim.close()]);
	await sim.close();
	const after = createAgent(sim);
	await expect(call(after, `${sim.serviceUrl}${paths.invoices}`, { token })).rejects.toThrow(
		/ECONNREFUSED|connect/,
	);
	await expect(call(after, `${sim.controlUrl}/control/state`)).rejects.toThrow(
		/ECONNREFUSED|connect/,
	);
	await after.close();
});

test('standalone mode makes its own CA in a temporary folder and removes it on close', async () => {
	const saved = process.env[CA_DIR_ENV];
	delete process.env[CA_DIR_ENV];
	try {
		const sim = await startSimulator({ invoices: 1, assets: 1 });
		expect(sim.caDir).not.toBe(saved);
		expect(existsSync(sim.caCertPath)).toBe(true);
		const agent = createAgent(sim);
		expect((await call(agent, `${sim.serviceUrl}${paths.invoices}`)).status).toBe(401);
		await agent.close();
		await sim.close();
		expect(existsSync(sim.caDir)).toBe(false);
	} finally {
		if (saved !== undefined) process.env[CA_DIR_ENV] = saved;
	}
});

test('a CA folder given by the caller is kept', async () => {
	const first = await startSimulator({ invoices: 1, assets: 1 });
	const sim = await startSimulator({ invoices: 1, assets: 1, caDir: first.caDir });
	expect(sim.caCertPath).toBe(first.caCertPath);
	await sim.close();
	expect(existsSync(first.caCertPath)).toBe(true);
	await first.close();
});

test('request bodies over 1 MiB are refused with 413', async () => {
	const sim = await startSimulator({ invoices: 1, assets: 1 });
	const agent = createAgent(sim);
	try {
		const token = await fetchToken(agent, sim);
		const response = await call(agent, `${sim.serviceUrl}${paths.subscriptions}`, {
			method: 'POST',
			token,
			json: {
				notificationUrl: 'https://example.com/hook',
				description: 'x'.repeat(1024 * 1024 + 10),
			},
		});
		expect(response.status).toBe(413);
		expect(response.json.code).toBe('payload_too_large');
		expect((await call(agent, `${sim.serviceUrl}${paths.invoices}`, { token })).status).toBe(200);
	} finally {
		await agent.close();
		await sim.close();
	}
});
