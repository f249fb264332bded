/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/**
 * Ports for the servers the tests start as other processes (n8n, its task-runner broker, Redis,
 * PostgreSQL), which bind them seconds after the port was chosen. A port the kernel hands out
 * (listen on port 0, then close) may be taken in those seconds: by any outgoing connection, whose
 * local port comes from the same ephemeral range, or by another test run choosing the same way.
 *
 * So a port is chosen below the kernel's ephemeral range (`ip_local_port_range`), where neither
 * outgoing connections nor `listen(0)` ever land, and claimed for this process with a file in the
 * cache folder (`ports/<port>`, created exclusively, holding our pid) that every run on the machine
 * respects. The claim ends when the process exits; a file left by a process that is gone is taken
 * over. Servers the tests start in this process listen on port 0 instead, bound at once.
 */
import { randomInt } from 'node:crypto';
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

import { machineCacheRoot } from './install';

/** Where no outgoing connection lands when the kernel's ephemeral range starts at 32768 or above. */
const LOWEST = 20_000;

/** The kernel's ephemeral range: [low, high]. */
export function ephemeralRange(): [number, number] {
	try {
		const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
			.trim()
			.split(/\s+/)
			.map(Number);
		if (low > 0 && high >= low) return [low, high];
	} catch {
		// not Linux: the IANA range, which macOS uses
	}
	return [49152, 65535];
}

/** The machine's, also for a run with a cache of its own (INVOICING_ASSETS_CACHE): every claim is seen by every run. */
export function portsFolder(): string {
	return join(machineCacheRoot(), 'ports');
}

const claimed = new Set<number>();
process.once('exit', () => {
	for (const port of claimed) release(port);
});

function isAlive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return (error as NodeJS.ErrnoException).code === 'EPERM';
	}
}

/** Claims `port` for this process; false when a live process holds it. */
function claim(port: number): boolean {
	const file = join(portsFolder(), String(port));
	for (let attempt = 0; attempt < 2; attempt++) {
		let failure: string | undefined;
		try {
			writeFileSync(file, String(process.pid), { flag: 'wx' });
			claimed.add(port);
			return true;
		} catch (error) {
			failure = (error as NodeJS.ErrnoException).code;
		}
		if (failure !== 'EEXIST') throw new Error(`cannot claim port ${port} in ${file}: ${failure}`);
		let holder = 0;
		try {
			holder = Number(readFileSync(file, 'utf8'));
		} catch {
			continue; // released meanwhile: try again
		}
		// A file being written (empty for an instant) or a live holder: not ours.
		if (!holder || isAlive(holder)) return false;
		try {
			unlinkSync(file);
		} catch {
			// another run took it over first
		}
	}
	return false;
}

function release(port: number) {
	claimed.delete(port);
	try {
		unlinkSync(join(portsFolder(), String(port)));
	} catch {
		// already gone
	}
}

async function canListen(port: number): Promise<boolean> {
	return await new Promise((resolve) => {
		const server = createServer();
		server.unref();
		server.once('error', () => resolve(false));
		server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
	});
}

/**
 * Where ports are chosen, [low, high): from LOWEST up to the ephemeral range. (On a machine whose
 * ephemeral range starts lower, above it: still claimed, but an outgoing connection may take one.)
 */
export function claimableRange(): [number, number] {
	const [ephemeralLow] = ephemeralRange();
	return ephemeralLow > LOWEST + 1000 ? [LOWEST, ephemeralLow] : [ephemeralLow, 65_536];
}

/**
 * A port on 127.0.0.1 that nothing else takes until this process exits: below the ephemeral
 * range, claimed for this process, and free right now. (`range` only for the tests of this file.)
 */
export async function freePort(range = claimableRange()): Promise<number> {
	const [low, high] = range;
	mkdirSync(portsFolder(), { recursive: true });
	for (let attempt = 0; attempt < Math.max(500, (high - low) * 20); attempt++) {
		const port = randomInt(low, high);
		if (claimed.has(port) || !claim(port)) continue;
		if (await canListen(port)) return port;
		// Something outside the test runs listens there: leave it, and the claim with it.
		release(port);
	}
	throw new Error(`no free port to claim in ${low}–${high - 1} (claims in ${portsFolder()})`);
}
