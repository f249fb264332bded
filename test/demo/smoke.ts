/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/* eslint-disable @n8n/community-nodes/no-dangerous-functions -- test tooling: runs the demo */
/**
 * `npm run test:demo`: a smoke check of `npm start`, as a user runs it and stops it.
 *
 * Runs the `start` script's command of package.json (with `--every 5`) in its own process group
 * and its own TMPDIR, waits for "Ready." (with "Credential test: OK" before it), then for at least
 * one successful execution of the example workflow through n8n's public API (signed in with the
 * printed login). Then sends SIGINT to the whole group, as Ctrl-C in a terminal does, and checks
 * that the demo exits 0, that none of the processes it started is left, and that it left nothing in
 * its TMPDIR. npm itself is not in between: on Ctrl-C npm always ends by the signal (not 0),
 * whatever its script did.
 * Ends with `Checks: N passed, M failed, T total`; exits 1 when a check failed.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';

import { waitFor } from '../n8n/executions';
import { REPOSITORY } from '../n8n/package';
import { handleSignals, onShutdown, runCleanups } from '../n8n/shutdown';

const EVERY_SECONDS = 5;
/** n8n is installed by then (`.ci/run` does it first); its start and the example take about a minute. */
const READY_TIMEOUT_MS = 5 * 60_000;
const STOP_TIMEOUT_MS = 90_000;
/** Caches of the tools, not the demo's: tsx's (<TMPDIR>/tsx-<uid>) and Node's module compile cache. */
const TOOL_CACHES = new Set([`tsx-${process.getuid?.() ?? 0}`, 'node-compile-cache']);

const results: Array<{ name: string; ok: boolean; detail: string }> = [];

function say(line: string) {
	process.stdout.write(`${line}\n`);
}

function check(name: string, ok: boolean, detail: string) {
	results.push({ name, ok, detail });
	say(`${ok ? '✓' : '✗'} ${name}: ${detail}`);
	return ok;
}

interface ProcessInfo {
	pid: number;
	startTime: string;
	command: string;
}

function readProcess(pid: number): (ProcessInfo & { ppid: number }) | undefined {
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
		const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
		if (fields[0] === 'Z') return undefined;
		const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
		return { pid, ppid: Number(fields[1]), startTime: fields[19], command };
	} catch {
		return undefined;
	}
}

/** The process `root` and all its descendants now (n8n runs in a process group of its own). */
function processTree(root: number): ProcessInfo[] {
	const all = readdirSync('/proc')
		.filter((entry) => /^\d+$/.test(entry))
		.map((entry) => readProcess(Number(entry)))
		.filter((info) => info !== undefined);
	const tree: ProcessInfo[] = [];
	const queue = [root];
	while (queue.length > 0) {
		const pid = queue.shift() as number;
		const info = all.find((candidate) => candidate.pid === pid);
		if (info) tree.push(info);
		queue.push(...all.filter((candidate) => candidate.ppid === pid).map((child) => child.pid));
	}
	return tree;
}

function stillAlive(info: ProcessInfo): boolean {
	return readProcess(info.pid)?.startTime === info.startTime;
}

function kill(pid: number, signal: NodeJS.Signals) {
	try {
		process.kill(pid, signal);
	} catch {
		// already gone
	}
}

async function main() {
	handleSignals();
	const scratch = mkdtempSync(join(tmpdir(), 'invoicing-demo-smoke-'));
	const demoTmp = join(scratch, 'tmp');
	mkdirSync(demoTmp);
	const scripts = (
		JSON.parse(readFileSync(join(REPOSITORY, 'package.json'), 'utf8')) as {
			scripts: Record<string, string>;
		}
	).scripts;
	const [command, ...args] = scripts.start.split(' ');
	args.push('--every', String(EVERY_SECONDS));
	say(
		`running the start script (${scripts.start} --every ${EVERY_SECONDS}) with TMPDIR=${demoTmp}`,
	);
	const demo = spawn(command, args, {
		cwd: REPOSITORY,
		detached: true,
		stdio: ['ignore', 'pipe', 'pipe'],
		env: {
			...process.env,
			TMPDIR: demoTmp,
			PATH: `${join(REPOSITORY, 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
		},
	});
	let output = '';
	const keep = (prefix: string) => (chunk: Buffer) => {
		output += chunk.toString('utf8');
		for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) say(`${prefix} ${line}`);
	};
	demo.stdout.on('data', keep('[demo]'));
	demo.stderr.on('data', keep('[demo stderr]'));
	const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
		demo.on('exit', (code, signal) => resolve({ code, signal })),
	);
	let started: ProcessInfo[] = [];
	let ended = false;
	void exited.then(() => (ended = true));
	// On any failure (or Ctrl-C of this script): stop everything the demo started, by PID.
	onShutdown(async () => {
		if (!ended && demo.pid) {
			kill(-demo.pid, 'SIGINT');
			await Promise.race([exited, sleep(STOP_TIMEOUT_MS)]);
		}
		for (const info of [...started, ...(demo.pid ? processTree(demo.pid) : [])]) {
			if (stillAlive(info)) {
				kill(-info.pid, 'SIGKILL');
				kill(info.pid, 'SIGKILL');
			}
		}
		rmSync(scratch, { recursive: true, force: true });
	});

	const ready = await waitFor(
		'"Ready." from the demo',
		() => (/^Ready\.$/m.test(output) ? true : ended ? 'exited' : undefined),
		READY_TIMEOUT_MS,
		250,
	).catch(() => 'timed out');
	if (!check('the demo comes up and prints "Ready."', ready === true, String(ready))) return;
	check(
		"the demo credential's test passes in n8n",
		/^Credential test: OK/m.test(output),
		output.match(/^Credential test: .*$/m)?.[0] ?? 'no "Credential test" line',
	);

	const open = /Open\s+(https:\/\/localhost:\d+)\/workflow\/(\w+)/.exec(output);
	const login = /Sign in as\s+(\S+) \/ (\S+)/.exec(output);
	const caPath = join(REPOSITORY, '.tmp/demo/ca/ca.pem');
	const agent = new Agent({ connect: { ca: readFileSync(caPath) } });
	try {
		if (!open || !login) {
			check('the demo prints the editor URL and the login', false, 'not found in its output');
			return;
		}
		const [, base, workflowId] = open;
		const [, email, password] = login;
		const call = async (method: 'GET' | 'POST', path: string, body?: unknown, headers = {}) => {
			const response = await request(`${base}${path}`, {
				method,
				dispatcher: agent,
				headers: { 'content-type': 'application/json', ...headers },
				body: body === undefined ? undefined : JSON.stringify(body),
			});
			return {
				status: response.statusCode,
				headers: response.headers,
				text: await response.body.text(),
			};
		};
		const signedIn = await call('POST', '/rest/login', { emailOrLdapLoginId: email, password });
		const cookie = String(signedIn.headers['set-cookie'] ?? '').split(';')[0];
		const key = await call(
			'POST',
			'/rest/api-keys',
			{ label: 'demo smoke', scopes: ['execution:list'], expiresAt: null },
			{ cookie },
		);
		const apiKey = (JSON.parse(key.text) as { data?: { rawApiKey?: string } }).data?.rawApiKey;
		if (
			!check(
				'signing in with the printed login',
				signedIn.status === 200 && !!apiKey,
				`login ${signedIn.status}, API key ${key.status}`,
			)
		)
			return;
		const successes = await waitFor(
			'a successful execution of the example workflow',
			async () => {
				const answer = await call(
					'GET',
					`/api/v1/executions?workflowId=${workflowId}&status=success`,
					undefined,
					{ 'x-n8n-api-key': apiKey ?? '' },
				);
				const list = (JSON.parse(answer.text) as { data?: unknown[] }).data ?? [];
				return list.length > 0 ? list.length : undefined;
			},
			120_000,
			1000,
		).catch(() => 0);
		check(
			'the example workflow runs on the invoices the simulator issues',
			successes > 0,
			`${successes} successful executions`,
		);
	} finally {
		await agent.close();
	}

	started = demo.pid ? processTree(demo.pid) : [];
	const n8n = started.filter((info) => /\/node_modules\/n8n\/bin\/n8n start\b/.test(info.command));
	check(
		'the demo runs n8n as its own process',
		n8n.length === 1,
		`${started.length} processes, n8n pid ${n8n.map((info) => info.pid).join(', ') || 'none'}`,
	);
	if (demo.pid) kill(-demo.pid, 'SIGINT');
	const stopped = await Promise.race([exited, sleep(STOP_TIMEOUT_MS).then(() => undefined)]);
	check(
		'Ctrl-C (SIGINT to the process group) stops the demo with exit code 0',
		stopped?.code === 0 && /^Stopped\.$/m.test(output),
		stopped
			? `code ${stopped.code}, signal ${stopped.signal}`
			: `still running after ${STOP_TIMEOUT_MS / 1000} s`,
	);
	await sleep(500);
	const alive = started.filter(stillAlive);
	check(
		'no process of the demo is left (n8n and its task runner included)',
		alive.length === 0,
		alive.length
			? alive.map((info) => `${info.pid} ${info.command.slice(0, 80)}`).join('; ')
			: `${started.length} processes, all ended`,
	);
	const left = readdirSync(demoTmp).filter((name) => !TOOL_CACHES.has(name));
	check(
		'the demo left nothing in its TMPDIR (its n8n folder, the simulator’s certificates, the packed package)',
		left.length === 0,
		left.length ? left.join(', ') : 'empty (tool caches aside)',
	);
}

main()
	.catch((error: Error) => check('the smoke check ran', false, error.stack ?? error.message))
	.finally(async () => {
		await runCleanups();
		const failed = results.filter((result) => !result.ok).length;
		say(`Checks: ${results.length - failed} passed, ${failed} failed, ${results.length} total`);
		process.exitCode = failed === 0 && results.length > 0 ? 0 : 1;
	});
