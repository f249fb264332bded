/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/* eslint-disable @n8n/community-nodes/no-dangerous-functions -- test tooling: runs the demo */
/**
 * `npm run test:demo`: a smoke check of `npm start`, as a user runs it and stops it.
 *
 * Runs the `start` script's command of package.json (with `--every 5`) in its own process group
 * and its own TMPDIR, waits for "Ready." (with "Credential test: OK" before it), then for at least
 * one successful execution of the example workflow through n8n's public API (signed in with the
 * printed login). The demo narrates: within a minute of "Ready." a line per execution appears, and
 * each line agrees with n8n's record of that execution (its number, status, the invoice of its event,
 * and the assets that invoice bills); a fault injected at the simulator (Invoice Get answered 403
 * once) must show as an error line naming the node's message.
 * Then sends SIGINT to the whole group, as Ctrl-C in a terminal does, and checks
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

import { waitFor, type Execution } from '../n8n/executions';
import { REPOSITORY } from '../n8n/package';
import { handleSignals, onShutdown, runCleanups } from '../n8n/shutdown';
import { SimulatorControlClient } from '../simulator/control-client';

const EVERY_SECONDS = 5;
/** n8n is installed by then (`.ci/run` does it first); its start and the example take about a minute. */
const READY_TIMEOUT_MS = 5 * 60_000;
const STOP_TIMEOUT_MS = 90_000;
/** The promise: the first execution's line within a minute of "Ready.". */
const FIRST_LINE_WITHIN_MS = 60_000;
/** A narration line of test/demo/narrate.ts. */
const NARRATION =
	/^\S+ {2}execution (\d+) {2}invoice (\S+) {2}(\d+) assets? fetched(?: \(([^)]*)\))?(?:, \d+ not found)? {2}(success|error: .*)$/;
const FAULT_MESSAGE = 'The API key is not allowed to do this';
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

/** What the invoice of an execution bills: Simplify's `assetIds`, or its lines' `assetId`s. */
function billedAssets(execution: Execution): string[] {
	const billed = new Set<string>();
	for (const runs of Object.values(execution.data?.resultData.runData ?? {})) {
		for (const item of runs.flatMap((run) => run.data?.main?.flat() ?? [])) {
			const json = item?.json ?? {};
			if (typeof json.invoiceNumber !== 'string') continue;
			if (Array.isArray(json.assetIds)) for (const id of json.assetIds) billed.add(String(id));
			for (const line of Array.isArray(json.lines)
				? (json.lines as Array<{ assetId?: unknown }>)
				: [])
				if (typeof line?.assetId === 'string') billed.add(line.assetId);
		}
	}
	return [...billed].sort();
}

function eventInvoice(execution: Execution): string | undefined {
	for (const runs of Object.values(execution.data?.resultData.runData ?? {})) {
		for (const item of runs.flatMap((run) => run.data?.main?.flat() ?? [])) {
			const data = item?.json?.data as { invoiceNumber?: unknown } | undefined;
			if (item?.json?.eventType && typeof data?.invoiceNumber === 'string')
				return data.invoiceNumber;
		}
	}
	return undefined;
}

/**
 * The narration: a line within a minute of "Ready.", each line true to n8n's record of its
 * execution, and an injected fault told as an error line.
 */
async function checkNarration(
	lines: Array<{ text: string; at: number }>,
	execution: (id: string) => Promise<Execution | undefined>,
	ended: () => Promise<Execution[]>,
	output: string,
) {
	const readyAt = lines.find((line) => line.text === 'Ready.')?.at ?? Date.now();
	const narrated = () =>
		lines.flatMap((line) => {
			const match = NARRATION.exec(line.text);
			return match
				? [
						{
							at: line.at,
							id: match[1],
							invoice: match[2],
							assets: match[4] ?? '',
							outcome: match[5],
						},
					]
				: [];
		});
	const first = await waitFor(
		'a narration line',
		() => narrated()[0],
		FIRST_LINE_WITHIN_MS,
		250,
	).catch(() => undefined);
	check(
		'the demo prints a line per execution within a minute of "Ready."',
		first !== undefined && first.at - readyAt <= FIRST_LINE_WITHIN_MS,
		first
			? `first line ${((first.at - readyAt) / 1000).toFixed(1)} s after "Ready."`
			: 'no narration line',
	);

	const control = /control (http:\/\/\S+)/.exec(output)?.[1];
	const sim = control ? new SimulatorControlClient(control) : undefined;
	try {
		let injected = false;
		if (sim) {
			await sim.addFault({ route: 'invoices.get', status: 403, times: 1 });
			injected = true;
		}
		const errorLine = await waitFor(
			'an error line for the injected fault',
			() => narrated().find((line) => line.outcome.startsWith('error: ')),
			60_000,
			250,
		).catch(() => undefined);
		check(
			'a failing execution (Invoice Get answered 403 once) is told as an error line with the node’s message',
			injected && errorLine !== undefined && errorLine.outcome.includes(FAULT_MESSAGE),
			!injected
				? 'no simulator control URL in the demo output'
				: (errorLine?.outcome ?? 'no error line within 60 s'),
		);
	} finally {
		await sim?.close();
	}

	// Three lines at least (the injected fault's among them), then no execution up to the newest
	// told may lack its line: the demo tells ended executions in order of their number.
	await waitFor('three narration lines', () => narrated().length >= 3, 60_000, 250).catch(
		() => false,
	);
	const newest = Math.max(0, ...narrated().map((line) => Number(line.id)));
	const untold = async () =>
		(await ended())
			.filter((entry) => Number(entry.id) <= newest)
			.filter((entry) => !narrated().some((line) => line.id === entry.id))
			.map((entry) => entry.id);
	const missing = await waitFor(
		'a line for every execution up to the newest told',
		async () => ((await untold()).length === 0 ? [] : undefined),
		15_000,
		500,
	).catch(untold);
	const told = narrated();
	const problems: string[] = [];
	if (missing.length > 0) problems.push(`executions without a line: ${missing.join(', ')}`);
	for (const line of told) {
		const record = await execution(line.id);
		if (!record) {
			problems.push(`execution ${line.id}: not in n8n`);
			continue;
		}
		const ok = line.outcome === 'success';
		if (ok !== (record.status === 'success'))
			problems.push(`execution ${line.id}: told ${line.outcome}, n8n says ${record.status}`);
		if (line.invoice !== eventInvoice(record))
			problems.push(`execution ${line.id}: invoice ${line.invoice}, event ${eventInvoice(record)}`);
		const assets = line.assets.split(', ').filter(Boolean).sort().join(', ');
		if (ok && assets !== billedAssets(record).join(', '))
			problems.push(
				`execution ${line.id}: assets (${assets}), the invoice bills (${billedAssets(record).join(', ')})`,
			);
	}
	const ids = told.map((line) => line.id);
	if (new Set(ids).size !== ids.length) problems.push(`an execution told twice: ${ids.join(', ')}`);
	check(
		"one line per ended execution, each true to n8n's record: number, outcome, the event's invoice, the assets it bills",
		told.length >= 3 && problems.length === 0,
		problems.length
			? problems.join('; ')
			: `${told.length} lines, executions up to ${newest}, each checked`,
	);
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
	/** The demo's complete stdout lines, with the time each arrived. */
	const lines: Array<{ text: string; at: number }> = [];
	let partial = '';
	const keep = (prefix: string) => (chunk: Buffer) => {
		output += chunk.toString('utf8');
		for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) say(`${prefix} ${line}`);
		if (prefix !== '[demo]') return;
		const parts = (partial + chunk.toString('utf8')).split('\n');
		partial = parts.pop() ?? '';
		for (const text of parts) lines.push({ text, at: Date.now() });
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
			{ label: 'demo smoke', scopes: ['execution:list', 'execution:read'], expiresAt: null },
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
		const execution = async (id: string) => {
			const answer = await call('GET', `/api/v1/executions/${id}?includeData=true`, undefined, {
				'x-n8n-api-key': apiKey ?? '',
			});
			return answer.status === 200 ? (JSON.parse(answer.text) as Execution) : undefined;
		};
		const ended = async () => {
			const answer = await call(
				'GET',
				`/api/v1/executions?workflowId=${workflowId}&limit=100`,
				undefined,
				{
					'x-n8n-api-key': apiKey ?? '',
				},
			);
			return (JSON.parse(answer.text) as { data?: Execution[] }).data ?? [];
		};
		await checkNarration(lines, execution, ended, output);
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
