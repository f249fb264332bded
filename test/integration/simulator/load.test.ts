/* eslint-disable @n8n/community-nodes/no-restricted-imports */
import { request as httpsRequest } from 'node:https';
import type { Agent } from 'undici';

import { paths, tokenRequestForm } from '../../../nodes/InvoicingAssets/transport/contract';
import { startSimulator, type Simulator } from '../../simulator';
import { call, createAgent, fetchToken, trustOptions } from './helpers';

let sim: Simulator;
let agent: Agent;
let token: string;

beforeAll(async () => {
	sim = await startSimulator();
	agent = createAgent(sim);
	token = await fetchToken(agent, sim);
});

afterAll(async () => {
	await agent.close();
	await sim.close();
});

/** Runs `count` tasks with at most `concurrency` at a time; returns their results in order. */
async function pool<T>(
	count: number,
	concurrency: number,
	task: (i: number) => Promise<T>,
): Promise<T[]> {
	const results = new Array<T>(count);
	let next = 0;
	await Promise.all(
		Array.from({ length: concurrency }, async () => {
			while (next < count) {
				const i = next++;
				results[i] = await task(i);
			}
		}),
	);
	return results;
}

/** One request on its own TLS connection (no keep-alive). */
function oneShot(url: string, bearer: string): Promise<number> {
	return new Promise((resolve, reject) => {
		const req = httpsRequest(
			url,
			{
				agent: false,
				headers: { authorization: `Bearer ${bearer}`, connection: 'close' },
				...trustOptions(sim),
			},
			(res) => {
				res.resume();
				res.on('end', () => resolve(res.statusCode ?? 0));
			},
		);
		req.on('error', reject);
		req.end();
	});
}

test('3,000 keep-alive requests at concurrency 25', async () => {
	sim.log.reset();
	const invoices = sim.data.invoices();
	const statuses = await pool(3000, 25, async (i) => {
		const path =
			i % 3 === 0
				? `${paths.invoices}?page=${(i % 50) + 1}&pageSize=20`
				: i % 3 === 1
					? paths.invoice(invoices[i % invoices.length].invoiceNumber)
					: `${paths.assets}?status=active&page=${(i % 5) + 1}`;
		const response = await call(agent, `${sim.serviceUrl}${path}`, { token });
		return response.status;
	});
	expect(statuses.filter((status) => status !== 200)).toEqual([]);
	expect(
		sim.log.count('invoices.list') + sim.log.count('invoices.get') + sim.log.count('assets.list'),
	).toBe(3000);
});

test('400 connection-per-request calls at concurrency 20', async () => {
	sim.log.reset();
	const statuses = await pool(400, 20, (i) =>
		oneShot(`${sim.serviceUrl}${paths.invoice(sim.data.invoices()[i].invoiceNumber)}`, token),
	);
	expect(statuses.filter((status) => status !== 200)).toEqual([]);
	expect(sim.log.count('invoices.get')).toBe(400);
});

test('300 token requests at concurrency 20 give 300 distinct tokens', async () => {
	sim.log.reset();
	const client = sim.defaultClient;
	const tokens = await pool(300, 20, async () => {
		const response = await call(agent, sim.tokenUrl, {
			method: 'POST',
			body: new URLSearchParams({
				...tokenRequestForm(client.clientId, client.clientSecret, client.scope),
			}).toString(),
			headers: { 'content-type': 'application/x-www-form-urlencoded' },
		});
		expect(response.status).toBe(200);
		return response.json.accessToken as string;
	});
	expect(new Set(tokens).size).toBe(300);
	expect(sim.log.tokensIssued()).toBe(300);
});
