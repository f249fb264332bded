/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/* eslint-disable @n8n/community-nodes/no-dangerous-functions -- starts child processes that install */
/**
 * The lock around the n8n cache (test/n8n/install.ts): runs on one machine that need the same
 * release at the same time install it once, and none uses it before it is complete. Here the
 * install is a stand-in that takes two seconds (a fake n8n and sqlite3) in a cache folder of the
 * test's own, so no real n8n is touched.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const REPOSITORY = join(__dirname, '../../..');

let cache: string;

beforeEach(() => {
	cache = mkdtempSync(join(tmpdir(), 'invoicing-install-lock-'));
});

afterEach(() => rmSync(cache, { recursive: true, force: true }));

/**
 * A process that asks for release 0.0.1-lock-test once `together` such processes have started
 * (each writes `arrived` to `events.log`). The stand-in install writes `start` and `end` there;
 * the process ends with `ready` when ensureN8n returned, or `failed <message>`.
 */
async function run(together = 1): Promise<void> {
	const code = `import('./test/n8n/install.ts').then((loaded) => {
		const { ensureN8n, CURRENT_N8N } = loaded.default ?? loaded;
		const { appendFileSync, mkdirSync, readFileSync, writeFileSync } = require('node:fs');
		const { join } = require('node:path');
		const events = join(process.env.INVOICING_ASSETS_CACHE, 'events.log');
		const release = { ...CURRENT_N8N, version: '0.0.1-lock-test' };
		appendFileSync(events, 'arrived ' + process.pid + '\\n');
		const arrived = () => readFileSync(events, 'utf8').split('arrived').length - 1;
		while (arrived() < ${together}) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
		try {
			ensureN8n(release, (_release, home) => {
				appendFileSync(events, 'start ' + process.pid + '\\n');
				const write = (path, text) => {
					mkdirSync(join(home, 'node_modules', path, '..'), { recursive: true });
					writeFileSync(join(home, 'node_modules', path), text);
				};
				write('sqlite3/index.js', '');
				Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2000);
				write('n8n/package.json', JSON.stringify({ version: release.version }));
				appendFileSync(events, 'end ' + process.pid + '\\n');
			});
			appendFileSync(events, 'ready ' + process.pid + '\\n');
		} catch (error) {
			appendFileSync(events, 'failed ' + process.pid + ' ' + error.message + '\\n');
		}
	})`;
	const child = spawn(process.execPath, ['--import', 'tsx', '-e', code], {
		cwd: REPOSITORY,
		env: { ...process.env, INVOICING_ASSETS_CACHE: cache },
		stdio: ['ignore', 'ignore', 'inherit'],
	});
	await new Promise((resolve) => child.on('exit', resolve));
}

function events(): string[] {
	return readFileSync(join(cache, 'events.log'), 'utf8')
		.trim()
		.split('\n')
		.map((line) => line.split(' ')[0])
		.filter((event) => event !== 'arrived');
}

test('three runs asking for a missing release at once: one installs it, the others wait and use it', async () => {
	// Each waits for the others, then checks the cache at the same instant, finds nothing, and wants to install.
	await Promise.all([run(3), run(3), run(3)]);
	expect(events()).toEqual(['start', 'end', 'ready', 'ready', 'ready']);
}, 60_000);

test('a lock left by a run that died is taken over', async () => {
	const gone = spawn(process.execPath, ['-e', '']);
	await new Promise((resolve) => gone.on('exit', resolve));
	const lock = join(cache, 'n8n-0.0.1-lock-test.lock');
	mkdirSync(lock, { recursive: true });
	writeFileSync(join(lock, 'pid'), String(gone.pid));
	await run();
	expect(events()).toEqual(['start', 'end', 'ready']);
}, 60_000);
