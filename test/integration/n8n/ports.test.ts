/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/* eslint-disable @n8n/community-nodes/no-dangerous-functions -- starts child processes that claim ports */
/**
 * The ports n8n, Redis and PostgreSQL are started on (test/n8n/ports.ts): outside the kernel's
 * ephemeral range, and never the same for two processes, so that nothing takes one between its
 * choice and the server binding it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';

import { claimableRange, ephemeralRange, freePort, portsFolder } from '../../n8n/ports';

const REPOSITORY = join(__dirname, '../../..');

/** Claimers still running when a test fails: ended after it, so that Jest can exit. */
const running = new Set<ChildProcess>();
afterEach(() => {
	for (const child of running) child.kill();
	running.clear();
});

/** A child process that claims `count` ports of `range` and holds them until its stdin closes. */
function claimer(count: number, range: [number, number]) {
	const code = `import('./test/n8n/ports.ts').then(async (loaded) => {
		const { freePort } = loaded.default ?? loaded;
		const ports = [];
		for (let i = 0; i < ${count}; i++) ports.push(await freePort(${JSON.stringify(range)}).catch(() => 0));
		process.stdout.write(JSON.stringify(ports) + '\\n');
		process.stdin.resume();
		process.stdin.on('end', () => process.exit(0));
	})`;
	const child = spawn(process.execPath, ['--import', 'tsx', '-e', code], {
		cwd: REPOSITORY,
		stdio: ['pipe', 'pipe', 'inherit'],
	});
	running.add(child);
	const ports = new Promise<number[]>((resolve) => {
		let output = '';
		child.stdout.on('data', (chunk: Buffer) => {
			output += chunk.toString();
			if (output.includes('\n')) resolve(JSON.parse(output) as number[]);
		});
	});
	const exited = new Promise((resolve) =>
		child.on('exit', (code) => {
			running.delete(child);
			resolve(code);
		}),
	);
	return {
		child,
		ports,
		release: async () => {
			child.stdin.end();
			await exited;
		},
	};
}

/** A range of `size` ports below the ephemeral range that nobody has claimed or bound. */
async function unusedRange(size: number): Promise<[number, number]> {
	const [low, high] = claimableRange();
	for (;;) {
		const start = low + Math.floor(Math.random() * (high - low - size));
		const ports = Array.from({ length: size }, (_, index) => start + index);
		if (ports.some((port) => existsSync(join(portsFolder(), String(port))))) continue;
		return [start, start + size];
	}
}

test('ports are chosen below the kernel’s ephemeral range, where no outgoing connection lands', async () => {
	const [ephemeralLow] = ephemeralRange();
	const ports = await Promise.all(Array.from({ length: 20 }, async () => await freePort()));
	expect(new Set(ports).size).toBe(20);
	for (const port of ports) {
		expect(port).toBeLessThan(ephemeralLow);
		expect(readFileSync(join(portsFolder(), String(port)), 'utf8')).toBe(String(process.pid));
	}
});

test('two processes claiming ports of one small range at the same time never get the same port; the claims end with them', async () => {
	const range = await unusedRange(10);
	const first = claimer(5, range);
	const second = claimer(5, range);
	const [a, b] = await Promise.all([first.ports, second.ports]);
	expect([...a, ...b].sort()).toEqual(
		Array.from({ length: 10 }, (_, index) => range[0] + index).sort(),
	);
	for (const port of a) {
		expect(readFileSync(join(portsFolder(), String(port)), 'utf8')).toBe(String(first.child.pid));
	}
	// The range is used up while they live: a third process gets none.
	const third = claimer(1, range);
	expect(await third.ports).toEqual([0]);
	await Promise.all([first.release(), second.release(), third.release()]);
	expect([...a, ...b].filter((port) => existsSync(join(portsFolder(), String(port))))).toEqual([]);
}, 60_000);

test('a claim left by a process that is gone is taken over; a port another program listens on is skipped', async () => {
	const [start] = await unusedRange(2);
	const gone = spawn(process.execPath, ['-e', '']);
	await new Promise((resolve) => gone.on('exit', resolve));
	writeFileSync(join(portsFolder(), String(start)), String(gone.pid));
	expect(await freePort([start, start + 1])).toBe(start);

	const foreign: Server = createServer();
	await new Promise<void>((resolve) => foreign.listen(start + 1, '127.0.0.1', resolve));
	try {
		await expect(freePort([start + 1, start + 2])).rejects.toThrow(/no free port/);
		expect(existsSync(join(portsFolder(), String(start + 1)))).toBe(false);
	} finally {
		await new Promise((resolve) => foreign.close(resolve));
	}
});
