/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/* eslint-disable @n8n/community-nodes/no-dangerous-functions -- starts child processes that install */
/**
 * The lock around the n8n cache (test/n8n/install.ts): runs on one machine that need the same
 * release at the same time install it once, none uses it before it is complete, none reinstalls
 * it while another run uses it, and a run killed while it installs blocks no one. Here the install
 * is a stand-in (a fake n8n and sqlite3) in a cache folder of the test's own, so no real n8n is
 * touched.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const REPOSITORY = join(__dirname, '../../..');
const VERSION = '0.0.1-lock-test';

let cache: string;

beforeEach(() => {
	cache = mkdtempSync(join(tmpdir(), 'invoicing-install-lock-'));
});

afterEach(() => rmSync(cache, { recursive: true, force: true }));

interface RunOptions {
	/** Starts asking once this many runs have started (each writes `arrived` to `events.log`). */
	together?: number;
	/** How long the stand-in install takes. */
	installMs?: number;
	/** How long the run goes on using the release after ensureN8n returned, then `done`. */
	useMs?: number;
}

/**
 * A process that asks for release 0.0.1-lock-test. The stand-in install writes `start` and `end`
 * to `events.log`; the process writes `ready` when ensureN8n returned (then `done` after `useMs`),
 * or `failed <message>`.
 */
function start({ together = 1, installMs = 2000, useMs = 0 }: RunOptions = {}): ChildProcess {
	const code = `import('./test/n8n/install.ts').then((loaded) => {
		const { ensureN8n, CURRENT_N8N } = loaded.default ?? loaded;
		const { appendFileSync, mkdirSync, readFileSync, writeFileSync } = require('node:fs');
		const { join } = require('node:path');
		const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
		const events = join(process.env.INVOICING_ASSETS_CACHE, 'events.log');
		const release = { ...CURRENT_N8N, version: '${VERSION}' };
		appendFileSync(events, 'arrived ' + process.pid + '\\n');
		const arrived = () => readFileSync(events, 'utf8').split('arrived').length - 1;
		while (arrived() < ${together}) sleep(5);
		try {
			ensureN8n(release, (_release, home) => {
				appendFileSync(events, 'start ' + process.pid + '\\n');
				const write = (path, text) => {
					mkdirSync(join(home, 'node_modules', path, '..'), { recursive: true });
					writeFileSync(join(home, 'node_modules', path), text);
				};
				write('sqlite3/index.js', '');
				sleep(${installMs});
				write('n8n/package.json', JSON.stringify({ version: release.version }));
				appendFileSync(events, 'end ' + process.pid + '\\n');
			});
			appendFileSync(events, 'ready ' + process.pid + '\\n');
			if (${useMs} > 0) {
				sleep(${useMs});
				appendFileSync(events, 'done ' + process.pid + '\\n');
			}
		} catch (error) {
			appendFileSync(events, 'failed ' + process.pid + ' ' + error.message + '\\n');
		}
	})`;
	return spawn(process.execPath, ['--import', 'tsx', '-e', code], {
		cwd: REPOSITORY,
		env: { ...process.env, INVOICING_ASSETS_CACHE: cache },
		stdio: ['ignore', 'ignore', 'inherit'],
	});
}

async function ended(child: ChildProcess): Promise<void> {
	if (child.exitCode !== null || child.signalCode !== null) return;
	await new Promise((resolve) => child.once('exit', resolve));
}

async function run(options?: RunOptions): Promise<void> {
	await ended(start(options));
}

function lines(): string[][] {
	const file = join(cache, 'events.log');
	if (!existsSync(file)) return [];
	return readFileSync(file, 'utf8')
		.trim()
		.split('\n')
		.map((line) => line.split(' '))
		.filter(([event]) => event !== 'arrived');
}

function events(): string[] {
	return lines().map(([event]) => event);
}

async function until(event: string) {
	const deadline = Date.now() + 30_000;
	while (!events().includes(event)) {
		if (Date.now() > deadline) throw new Error(`no "${event}" in 30 s: ${events().join(', ')}`);
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
}

test('three runs asking for a missing release at once: one installs it, the others wait and use it', async () => {
	// Each waits for the others, then checks the cache at the same instant, finds nothing, and wants to install.
	await Promise.all([run({ together: 3 }), run({ together: 3 }), run({ together: 3 })]);
	expect(events()).toEqual(['start', 'end', 'ready', 'ready', 'ready']);
}, 60_000);

test('a release found broken is not reinstalled while another run uses it', async () => {
	const user = start({ useMs: 3000 });
	await until('ready');
	// Broken under the running user's feet (as a failed check would find it): the next run must
	// wait for the user to end before it removes and reinstalls the folder.
	rmSync(join(cache, `n8n-${VERSION}`, 'node_modules/n8n/package.json'));
	await run();
	await ended(user);
	const [, userPid] = lines().find(([event]) => event === 'ready') ?? [];
	expect(lines().map(([event, pid]) => `${event}${pid === userPid ? ' (user)' : ''}`)).toEqual([
		'start (user)',
		'end (user)',
		'ready (user)',
		'done (user)',
		'start',
		'end',
		'ready',
	]);
}, 60_000);

test('a run killed while it installs leaves no lock behind: the next run installs at once', async () => {
	const killed = start({ installMs: 60_000 });
	await until('start');
	killed.kill('SIGKILL');
	await ended(killed);
	// A lock that outlived its run would hold this one for LOCK_WAIT_SECONDS (20 min), past the time limit.
	await run();
	expect(events()).toEqual(['start', 'start', 'end', 'ready']);
}, 60_000);
