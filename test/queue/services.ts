/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/* eslint-disable @n8n/community-nodes/no-dangerous-functions -- test tooling: installs and starts Redis and PostgreSQL */
/**
 * Redis and PostgreSQL for n8n's queue mode, from Debian's packages: installed when missing
 * (root only, idempotent), started on 127.0.0.1 with free ports and throw-away data folders, and
 * stopped by their own process group. Nothing is left behind after `stop()`.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
	chownSync,
	closeSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	openSync,
	readFileSync,
	readdirSync,
	rmSync,
} from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { freePort, groupMembers } from '../n8n/instance';
import { aptGet } from '../tools/apt';

function say(message: string) {
	process.stderr.write(`[queue services] ${message}\n`);
}

const POSTGRES_ROOT = '/usr/lib/postgresql';

/** The bin folder of the newest PostgreSQL under /usr/lib/postgresql, if any. */
function postgresBin(): string | undefined {
	if (!existsSync(POSTGRES_ROOT)) return undefined;
	const versions = readdirSync(POSTGRES_ROOT)
		.filter((name) => /^\d+$/.test(name) && existsSync(join(POSTGRES_ROOT, name, 'bin/initdb')))
		.sort((a, b) => Number(b) - Number(a));
	return versions.length ? join(POSTGRES_ROOT, versions[0], 'bin') : undefined;
}

function redisBin(): string | undefined {
	return ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((path) => existsSync(path));
}

/**
 * Installs Debian's `redis-server` and `postgresql` when either is missing (about 20 s with a
 * fresh package list). Does nothing when both are there.
 */
export function ensureQueueServices(): { postgres: string; redis: string } {
	let postgres = postgresBin();
	let redis = redisBin();
	if (postgres && redis) return { postgres, redis };
	if (process.getuid?.() !== 0 || !existsSync('/usr/bin/apt-get')) {
		throw new Error(
			'Queue mode needs redis-server and PostgreSQL: install the Debian packages redis-server and postgresql (as root: apt-get install -y redis-server postgresql).',
		);
	}
	const started = Date.now();
	say('installing redis-server and postgresql with apt-get');
	const packages = ['install', '--no-install-recommends', 'redis-server', 'postgresql'];
	let installed = aptGet(packages);
	if (!installed.ok) {
		// A stale package list is the usual cause; refresh it once.
		const updated = aptGet(['update']);
		if (!updated.ok) throw new Error(`apt-get update failed: ${updated.reason}`);
		installed = aptGet(packages);
	}
	if (!installed.ok) throw new Error(`apt-get install failed: ${installed.reason}`);
	say(`apt-get took ${Math.round((Date.now() - started) / 1000)} s`);
	postgres = postgresBin();
	redis = redisBin();
	if (!postgres || !redis)
		throw new Error('apt-get ran but redis-server or initdb is still missing');
	return { postgres, redis };
}

export interface RunningService {
	name: string;
	port: number;
	/** Process-group id (the service's own pid). */
	pid: number;
	folder: string;
	logPath: string;
	stop(): Promise<void>;
}

/** The system user PostgreSQL runs as when we are root (it refuses to run as root). */
function postgresUser(): { uid: number; gid: number } | undefined {
	if (process.getuid?.() !== 0) return undefined;
	const line = readFileSync('/etc/passwd', 'utf8')
		.split('\n')
		.find((entry) => entry.startsWith('postgres:'));
	if (!line) throw new Error('PostgreSQL refuses to run as root and there is no "postgres" user');
	const [, , uid, gid] = line.split(':');
	return { uid: Number(uid), gid: Number(gid) };
}

async function stopGroup(pid: number, signal: NodeJS.Signals, leader?: ChildProcess) {
	try {
		if (leader && leader.exitCode === null) process.kill(pid, signal);
		else process.kill(-pid, signal);
	} catch {
		// already gone
	}
	const deadline = Date.now() + 20_000;
	while (groupMembers(pid).length > 0) {
		if (Date.now() > deadline) {
			try {
				process.kill(-pid, 'SIGKILL');
			} catch {
				// already gone
			}
			await sleep(200);
			break;
		}
		await sleep(100);
	}
}

/** Runs `work`; when it fails, runs `cleanUp` before the failure goes on. */
export async function cleaningUpOnFailure<T>(
	work: () => Promise<T>,
	cleanUp: () => Promise<unknown>,
): Promise<T> {
	let succeeded = false;
	try {
		const value = await work();
		succeeded = true;
		return value;
	} finally {
		if (!succeeded) await cleanUp();
	}
}

const liveGroups = new Set<number>();
process.once('exit', () => {
	for (const pid of liveGroups) {
		try {
			process.kill(-pid, 'SIGKILL');
		} catch {
			// already gone
		}
	}
});

function spawnService(
	command: string,
	args: string[],
	logPath: string,
	options: { uid?: number; gid?: number; env?: NodeJS.ProcessEnv } = {},
): ChildProcess {
	const log = openSync(logPath, 'a');
	const child = spawn(command, args, {
		detached: true,
		stdio: ['ignore', log, log],
		uid: options.uid,
		gid: options.gid,
		env: options.env ?? process.env,
	});
	closeSync(log);
	if (!child.pid) throw new Error(`${command} did not start`);
	liveGroups.add(child.pid);
	return child;
}

async function waitUntil(
	what: string,
	child: ChildProcess,
	logPath: string,
	probe: () => Promise<boolean>,
	timeoutMs = 60_000,
) {
	const deadline = Date.now() + timeoutMs;
	while (Date.now() < deadline) {
		if (child.exitCode !== null) {
			throw new Error(`${what} exited (code ${child.exitCode}):\n${readLog(logPath)}`);
		}
		if (await probe().catch(() => false)) return;
		await sleep(100);
	}
	throw new Error(`${what} was not ready within ${timeoutMs / 1000} s:\n${readLog(logPath)}`);
}

function readLog(path: string): string {
	try {
		return readFileSync(path, 'utf8').slice(-3000);
	} catch {
		return '';
	}
}

/** Sends one line over TCP and resolves with the first chunk of the answer. */
async function ask(port: number, line: string): Promise<string> {
	return await new Promise((resolve, reject) => {
		const socket = connect({ host: '127.0.0.1', port });
		socket.setTimeout(2000);
		socket.once('connect', () => socket.write(line));
		socket.once('data', (data) => {
			socket.destroy();
			resolve(data.toString('utf8'));
		});
		socket.once('timeout', () => {
			socket.destroy();
			reject(new Error('timeout'));
		});
		socket.once('error', reject);
	});
}

/** Redis on 127.0.0.1, in memory only (`--save ''`, no AOF), its folder removed on stop. */
export async function startRedis(binary = ensureQueueServices().redis): Promise<RunningService> {
	const folder = mkdtempSync(join(tmpdir(), 'n8n-queue-redis-'));
	const port = await freePort();
	const logPath = join(folder, 'redis.log');
	const child = spawnService(
		binary,
		[
			'--port',
			String(port),
			'--bind',
			'127.0.0.1',
			'--dir',
			folder,
			'--save',
			'',
			'--appendonly',
			'no',
			'--daemonize',
			'no',
			'--protected-mode',
			'yes',
			'--logfile',
			'',
		],
		logPath,
	);
	const pid = child.pid as number;
	const stop = async () => {
		await stopGroup(pid, 'SIGTERM');
		liveGroups.delete(pid);
		rmSync(folder, { recursive: true, force: true });
	};
	await cleaningUpOnFailure(
		async () =>
			await waitUntil('redis-server', child, logPath, async () =>
				(await ask(port, 'PING\r\n')).startsWith('+PONG'),
			),
		stop,
	);
	return { name: 'redis', port, pid, folder, logPath, stop };
}

export interface RunningPostgres extends RunningService {
	user: string;
	database: string;
	/** Runs SQL with psql as the superuser `user` (database `postgres` unless given); its rows, unaligned. */
	sql(statement: string, database?: string): string;
}

/**
 * A throw-away PostgreSQL cluster: initdb into a temporary folder (trust authentication, loopback
 * only, durability off: it is deleted afterwards), one database for n8n.
 */
export async function startPostgres(
	bin = ensureQueueServices().postgres,
): Promise<RunningPostgres> {
	const folder = mkdtempSync(join(tmpdir(), 'n8n-queue-postgres-'));
	const data = join(folder, 'data');
	const logPath = join(folder, 'postgres.log');
	const owner = postgresUser();
	mkdirSync(data);
	if (owner) {
		chownSync(folder, owner.uid, owner.gid);
		chownSync(data, owner.uid, owner.gid);
	}
	const user = 'n8n';
	const database = 'n8n';
	const env = { PATH: process.env.PATH ?? '', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', HOME: folder };
	execFileSync(
		join(bin, 'initdb'),
		['-D', data, '-U', user, '-A', 'trust', '-E', 'UTF8', '--no-sync', '--no-instructions'],
		{ cwd: folder, env, uid: owner?.uid, gid: owner?.gid, stdio: ['ignore', 'ignore', 'pipe'] },
	);
	const port = await freePort();
	const child = spawnService(
		join(bin, 'postgres'),
		[
			'-D',
			data,
			'-p',
			String(port),
			'-c',
			'listen_addresses=127.0.0.1',
			'-c',
			`unix_socket_directories=${folder}`,
			'-c',
			'fsync=off',
			'-c',
			'synchronous_commit=off',
			'-c',
			'full_page_writes=off',
			'-c',
			'max_connections=200',
		],
		logPath,
		{ uid: owner?.uid, gid: owner?.gid, env },
	);
	if (owner) chownSync(logPath, owner.uid, owner.gid);
	const pid = child.pid as number;
	const stop = async () => {
		// SIGINT to the postmaster is PostgreSQL's "fast" shutdown; the group is killed if it lingers.
		await stopGroup(pid, 'SIGINT', child);
		liveGroups.delete(pid);
		rmSync(folder, { recursive: true, force: true });
	};
	const psql = (sql: string, db = 'postgres') =>
		execFileSync(
			join(bin, 'psql'),
			[
				'-h',
				'127.0.0.1',
				'-p',
				String(port),
				'-U',
				user,
				'-d',
				db,
				'-X',
				'-q',
				'-t',
				'-A',
				'-c',
				sql,
			],
			{ env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
		);
	await cleaningUpOnFailure(async () => {
		await waitUntil('postgres', child, logPath, async () => {
			psql('select 1');
			return true;
		});
		psql(`create database ${database}`);
	}, stop);
	return { name: 'postgres', port, pid, folder, logPath, stop, user, database, sql: psql };
}
