/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/* eslint-disable @n8n/community-nodes/no-dangerous-functions -- starts the simulator CLI, as npm run simulator does */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getCACertificates } from 'node:tls';
import { Agent } from 'undici';

import {
	GRANT_PATH,
	paths,
	tokenRequestForm,
} from '../../../nodes/InvoicingAssets/transport/contract';
import { readAccessToken } from '../../../nodes/InvoicingAssets/transport/responses';
import { call } from './helpers';

/**
 * `npm run simulator` (tsx test/simulator/cli.ts) prints a credential that works: its values,
 * read from the output, get a token and list subscriptions over HTTPS trusting the printed CA.
 */
const REPOSITORY = join(__dirname, '..', '..', '..');
const READY = 'Press Ctrl-C to stop.';

let child: ChildProcess | undefined;
let caDir: string;

beforeAll(() => {
	caDir = mkdtempSync(join(tmpdir(), 'invoicing-cli-ca-'));
});

afterAll(async () => {
	if (child && child.exitCode === null) {
		child.kill('SIGKILL');
		await new Promise((resolve) => child?.once('exit', resolve));
	}
	rmSync(caDir, { recursive: true, force: true });
});

/** Starts the CLI on free ports and resolves with its output once it is ready. */
function startCli(): Promise<string> {
	// What `npm run simulator` runs, with the Node.js of this test run.
	const tsx = join(REPOSITORY, 'node_modules', 'tsx', 'dist', 'cli.mjs');
	const args = [
		tsx,
		'test/simulator/cli.ts',
		'--ca-dir',
		caDir,
		'--invoices',
		'5',
		'--assets',
		'5',
	];
	for (const port of ['identity', 'service', 'control']) args.push(`--${port}-port`, '0');
	const started = spawn(process.execPath, args, {
		cwd: REPOSITORY,
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	child = started;
	let output = '';
	let errors = '';
	return new Promise((resolve, reject) => {
		started.stdout?.on('data', (chunk: Buffer) => {
			output += chunk.toString('utf8');
			if (output.includes(READY)) resolve(output);
		});
		started.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString('utf8')));
		started.once('exit', (code) =>
			reject(new Error(`The simulator CLI exited (${code}) before it was ready: ${errors}`)),
		);
	});
}

/** The value printed after `label:` in the first credential block (production). */
function printed(output: string, label: string): string {
	const line = output.split('\n').find((entry) => entry.trim().startsWith(`${label}:`));
	if (!line) throw new Error(`The output has no "${label}:" line`);
	return line.slice(line.indexOf(':') + 1).trim();
}

test('npm run simulator prints a credential that gets a token and lists subscriptions', async () => {
	const output = await startCli();
	const credential = {
		environment: printed(output, 'Environment'),
		baseUrl: printed(output, 'Base URL'),
		identityUrl: printed(output, 'Identity Service URL'),
		scope: printed(output, 'Scope'),
		clientId: printed(output, 'Client ID'),
		clientSecret: printed(output, 'Client Secret'),
	};
	expect(credential.environment).toBe('production');
	expect(credential.baseUrl.startsWith('https://localhost:')).toBe(true);
	expect(credential.scope.endsWith('/.default')).toBe(true);

	const ca = readFileSync(printed(output, 'CA certificate'), 'utf8');
	const agent = new Agent({ connect: { ca: [...getCACertificates('default'), ca] } });
	try {
		const tokenAnswer = await call(agent, `${credential.identityUrl}${GRANT_PATH}`, {
			method: 'POST',
			body: new URLSearchParams({
				...tokenRequestForm(credential.clientId, credential.clientSecret, credential.scope),
			}).toString(),
			headers: { 'content-type': 'application/x-www-form-urlencoded' },
		});
		expect(tokenAnswer.status).toBe(200);
		const token = readAccessToken(tokenAnswer.text) ?? '';
		expect(token.length).toBeGreaterThanOrEqual(32);

		const listed = await call(agent, `${credential.baseUrl}${paths.subscriptions}`, { token });
		expect([listed.status, listed.json]).toEqual([200, []]);
	} finally {
		await agent.close();
	}

	const exited = new Promise<number | null>((resolve) => child?.once('exit', resolve));
	child?.kill('SIGTERM');
	expect(await exited).toBe(0);
});
