/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/* eslint-disable @n8n/community-nodes/no-dangerous-functions -- starts a child process that sends one request */
/**
 * The simulator tells which local process sent a request (test/n8n/socket-owner.ts), as the
 * queue-mode scenario uses it to prove that the main, not a worker, manages subscriptions.
 */
import { spawn } from 'node:child_process';
import { request } from 'undici';

import { processOfLocalPort } from '../../n8n/socket-owner';
import { startSimulator, type Simulator } from '../../simulator';
import { DEVIATION_HEADER } from '../../simulator/contract-check';

let sim: Simulator;
const senders: Array<{ route: string; pid: number | undefined }> = [];

beforeAll(async () => {
	sim = await startSimulator({
		invoices: 3,
		assets: 1,
		onRequest: (arriving) =>
			senders.push({
				route: arriving.route,
				pid: arriving.remotePort === null ? undefined : processOfLocalPort(arriving.remotePort),
			}),
	});
});

afterAll(async () => await sim.close());

beforeEach(() => {
	senders.length = 0;
});

test('a request from this process is attributed to this process', async () => {
	const answer = await request(`${sim.serviceUrl}/invoice/v1/invoices`, {
		headers: {
			accept: 'application/json',
			[DEVIATION_HEADER]: 'no token: only its sender matters',
		},
	});
	await answer.body.text();
	expect(answer.statusCode).toBe(401);
	expect(senders).toEqual([{ route: 'invoices.list', pid: process.pid }]);
});

test('a request from a child process is attributed to the child, not to this process', async () => {
	const child = spawn(
		process.execPath,
		[
			'-e',
			`fetch(${JSON.stringify(`${sim.serviceUrl}/asset/v1/assets`)}, { headers: { ${JSON.stringify(DEVIATION_HEADER)}: 'no token: only its sender matters' } }).then((r) => process.stdout.write(String(r.status)))`,
		],
		{
			env: { ...process.env, NODE_EXTRA_CA_CERTS: sim.caCertPath },
			stdio: ['ignore', 'pipe', 'inherit'],
		},
	);
	let output = '';
	child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
	await new Promise((resolve) => child.on('close', resolve));
	expect(output).toBe('401');
	expect(senders).toEqual([{ route: 'assets.list', pid: child.pid }]);
	expect(senders[0].pid).not.toBe(process.pid);
});
