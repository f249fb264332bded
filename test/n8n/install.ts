/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/* eslint-disable @n8n/community-nodes/no-dangerous-functions -- test tooling: runs npm to install n8n */
/**
 * Real n8n releases, each installed once into a cache folder outside the repository and reused
 * while it still loads under its Node. The steps are those that work with the npm registry alone:
 * pin the dependencies that do not resolve here, install without scripts, then build the two
 * native modules for the Node that runs that release.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
	closeSync,
	existsSync,
	mkdirSync,
	openSync,
	readFileSync,
	rmSync,
	writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

export interface N8nRelease {
	version: string;
	/** The Node major that runs it: the one its Docker image ships. */
	nodeMajor: 22 | 24;
	/** npm overrides without which its dependency tree does not install from the registry here. */
	overrides: Record<string, string>;
	/**
	 * How this release's public API turns a workflow's triggers on and off: 1.x and 2.x before
	 * 2.33 "activate"/"deactivate", later 2.x "publish"/"unpublish".
	 */
	activation: { on: 'publish' | 'activate'; off: 'unpublish' | 'deactivate' };
	/**
	 * Whether the owner can be set through the environment (N8N_INSTANCE_OWNER_*, 2.x from about
	 * 2.30); older releases are set up once through `POST /rest/owner/setup`.
	 */
	ownerFromEnv: boolean;
	/** N8N_DISABLED_MODULES: 1.x refuses a module name it does not know (mcp-registry). */
	disabledModules?: string;
	/** Whether the public API has `POST /credentials/{id}/test` (else the editor's `/rest/credentials/test`). */
	publicCredentialTest: boolean;
	/**
	 * Fields the public API requires in every credential's data on this release: 1.x's schema
	 * check demands the HTTP-request domain restriction n8n adds to each credential type.
	 */
	credentialDataExtras: Record<string, string>;
}

/** Today's pin: the end-to-end suite, the demo, queue mode and reliability run on it. */
export const CURRENT_N8N: N8nRelease = {
	version: '2.41.1',
	nodeMajor: 24,
	overrides: { linkedom: '0.18.13' },
	activation: { on: 'publish', off: 'unpublish' },
	ownerFromEnv: true,
	disabledModules: 'mcp-registry',
	publicCredentialTest: true,
	credentialDataExtras: {},
};

/**
 * The newest 1.x that installs here. Its `xlsx` is a tarball on a host this machine cannot
 * reach: the registry's last xlsx stands in for it (n8n's spreadsheet nodes, which use it, are
 * not part of any scenario).
 */
export const N8N_1X: N8nRelease = {
	version: '1.123.81',
	nodeMajor: 22,
	overrides: { linkedom: '0.18.13', xlsx: '0.18.5' },
	activation: { on: 'activate', off: 'deactivate' },
	ownerFromEnv: false,
	publicCredentialTest: false,
	credentialDataExtras: { allowedHttpRequestDomains: 'all' },
};

/** The oldest 2.x the package supports (docs/compatibility.md says why). */
export const OLDEST_N8N_2X: N8nRelease = {
	version: '2.0.0',
	nodeMajor: 24,
	overrides: { linkedom: '0.18.13', xlsx: '0.18.5' },
	activation: { on: 'activate', off: 'deactivate' },
	ownerFromEnv: false,
	publicCredentialTest: false,
	credentialDataExtras: { allowedHttpRequestDomains: 'all' },
};

export const N8N_RELEASES = [N8N_1X, OLDEST_N8N_2X, CURRENT_N8N];

/** Today's pin's version, as the scripts that name it read it. */
export const N8N_VERSION = CURRENT_N8N.version;

/** The release `N8N_MATRIX_VERSION` names, else today's pin. */
export function releaseFromEnv(): N8nRelease {
	const wanted = process.env.N8N_MATRIX_VERSION;
	if (!wanted) return CURRENT_N8N;
	const release = N8N_RELEASES.find((candidate) => candidate.version === wanted);
	if (!release) {
		throw new Error(
			`N8N_MATRIX_VERSION=${wanted} is not in the matrix (${N8N_RELEASES.map((r) => r.version).join(', ')})`,
		);
	}
	return release;
}

/** The machine's cache folder: `~/.cache/n8n-nodes-invoicing-assets`. */
export function machineCacheRoot(): string {
	return join(
		process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'),
		'n8n-nodes-invoicing-assets',
	);
}

/** Where n8n and Node are installed: the machine's cache, or INVOICING_ASSETS_CACHE (e.g. to time a cold run). */
export function cacheRoot(): string {
	return process.env.INVOICING_ASSETS_CACHE ?? machineCacheRoot();
}

export interface N8nInstallation {
	release: N8nRelease;
	home: string;
	/** The n8n CLI script, to run with `node`. */
	bin: string;
	/** The Node binary that runs this release. */
	node: string;
}

function say(message: string) {
	process.stderr.write(`[n8n install] ${message}\n`);
}

/** The Node binary of a major: this process's when it matches, else test/tools/with-node's. */
export function nodeFor(major: number): string {
	if (Number(process.versions.node.split('.')[0]) === major) return process.execPath;
	const withNode = join(__dirname, '../tools/with-node');
	const home = execFileSync(withNode, [String(major)], {
		encoding: 'utf8',
		stdio: ['ignore', 'pipe', 'inherit'],
	}).trim();
	return join(home, 'bin/node');
}

function installationAt(release: N8nRelease, home: string): N8nInstallation {
	return {
		release,
		home,
		bin: join(home, 'node_modules/n8n/bin/n8n'),
		node: nodeFor(release.nodeMajor),
	};
}

export function homeOf(release: N8nRelease): string {
	return join(cacheRoot(), `n8n-${release.version}`);
}

/** What is in a release's folder: usable, or why not. */
type InstallState = 'usable' | 'missing' | 'other version' | 'does not load' | 'check timed out';

function installState(release: N8nRelease, home: string): InstallState {
	const packageJson = join(home, 'node_modules/n8n/package.json');
	if (!existsSync(packageJson)) return 'missing';
	if (
		(JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }).version !==
		release.version
	) {
		return 'other version';
	}
	const probe = spawnSync(
		nodeFor(release.nodeMajor),
		[
			'-e',
			// isolated-vm came with later 2.x releases (2.0.0 has none): probed only where installed.
			"for (const name of ['sqlite3', 'isolated-vm']) { try { require.resolve(name); } catch { if (name === 'sqlite3') throw new Error('no sqlite3'); continue; } require(name); }",
		],
		{ cwd: home, stdio: 'ignore', timeout: 120_000 },
	);
	if (probe.status === 0) return 'usable';
	// Killed by the timeout (a loaded machine), not a failed require: say so, never reinstall for it.
	return probe.signal ? 'check timed out' : 'does not load';
}

/** True when n8n is the release's version and its native modules load under the release's Node. */
export function isUsable(release: N8nRelease, home = homeOf(release)): boolean {
	return installState(release, home) === 'usable';
}

function npm(home: string, node: string, args: string[]) {
	const started = Date.now();
	execFileSync('npm', args, {
		cwd: home,
		stdio: ['ignore', 'ignore', 'inherit'],
		env: {
			...process.env,
			PATH: `${dirname(node)}:${process.env.PATH ?? ''}`,
			npm_config_nodedir: dirname(dirname(node)),
			npm_config_yes: 'true',
			npm_config_audit: 'false',
			npm_config_fund: 'false',
			npm_config_loglevel: 'error',
		},
	});
	say(`npm ${args[0]} took ${Math.round((Date.now() - started) / 1000)} s`);
}

/* ------------------------------------------------------------ the install lock */

/** How long a run waits for the lock (a cold install takes 5–7 min; a run may use n8n for longer). */
const LOCK_WAIT_SECONDS = 20 * 60;

/** flock(1)'s exit code when the lock was not obtained (busy with -n, or -w ran out). */
const LOCK_BUSY = 75;

type LockMode = 'shared' | 'exclusive';

/**
 * A release's lock: flock(2) on a file next to its folder (`n8n-<version>.flock`), taken through
 * util-linux's `flock` on a descriptor this process keeps open (flock(2) locks belong to the open
 * file, so the lock outlives the `flock` process and ends with ours). Shared from the check on, for
 * as long as the process lives: no run installs a release while another checks or uses it;
 * exclusive while one installs it: no run checks or starts it meanwhile. The kernel drops a lock
 * when its process ends, however it ends, so nothing stale is left to take over. Where `flock` does
 * not exist (macOS), the cache is used unlocked, and the run says so.
 */
class ReleaseLock {
	private readonly path: string;
	private descriptor: number | undefined;
	private held: LockMode | undefined;

	constructor(release: N8nRelease) {
		this.path = `${homeOf(release)}.flock`;
	}

	/** Waits (at most LOCK_WAIT_SECONDS) for the lock in `mode`, converting the one held. */
	take(mode: LockMode, why: string) {
		if (this.held === mode) return;
		if (this.descriptor === undefined) {
			mkdirSync(dirname(this.path), { recursive: true });
			this.descriptor = openSync(this.path, 'a');
		}
		const flag = mode === 'shared' ? '-s' : '-x';
		if (this.flock([flag, '-n']) === LOCK_BUSY) {
			say(`waiting for other runs on this machine: ${why} (lock ${this.path})`);
			const code = this.flock([flag, '-w', String(LOCK_WAIT_SECONDS)]);
			if (code === LOCK_BUSY) {
				throw new Error(
					`Waited ${LOCK_WAIT_SECONDS / 60} minutes for ${this.path}: ${why}. Another run on this machine holds it (lslocks names the process).`,
				);
			}
		}
		this.held = mode;
	}

	/** Gives the lock up (closing our descriptor ends it). */
	release() {
		if (this.descriptor !== undefined) closeSync(this.descriptor);
		this.descriptor = undefined;
		this.held = undefined;
	}

	/** flock(1)'s exit code on our descriptor (handed to it as its fd 3); 0 where there is no flock(1). */
	private flock(args: string[]): number {
		const result = spawnSync('flock', [...args, '-E', String(LOCK_BUSY), '3'], {
			stdio: ['ignore', 'ignore', 'inherit', this.descriptor],
		});
		if ((result.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') {
			if (!ReleaseLock.toldUnlocked)
				say('no flock(1) on this machine: the n8n cache is not locked');
			ReleaseLock.toldUnlocked = true;
			return 0;
		}
		if (result.status !== 0 && result.status !== LOCK_BUSY) {
			throw new Error(
				`flock ${args.join(' ')} ${this.path} failed: ${result.error?.message ?? `exit ${result.status}`}`,
			);
		}
		return result.status;
	}

	private static toldUnlocked = false;
}

/** The releases this process holds a shared lock on, checked usable under it. */
const checked = new Map<string, N8nInstallation>();
const locks = new Map<string, ReleaseLock>();

/**
 * Returns a usable n8n of the release, installing it (about 5 minutes, 3 GB) when the cache has
 * none. Safe when several runs on the machine call it at once (see ReleaseLock): one installs, the
 * others wait, and none removes a folder another run uses. Checked once per process.
 * (`installer` only for the lock's own test.)
 */
export function ensureN8n(
	release: N8nRelease = CURRENT_N8N,
	installer: (release: N8nRelease, home: string) => void = install,
): N8nInstallation {
	const known = checked.get(release.version);
	if (known) return known;
	const home = homeOf(release);
	const lock = locks.get(release.version) ?? new ReleaseLock(release);
	locks.set(release.version, lock);
	let usable = false;
	try {
		lock.take('shared', `another run installs n8n@${release.version}`);
		let state = installState(release, home);
		if (state !== 'usable' && state !== 'check timed out') {
			lock.take(
				'exclusive',
				`n8n@${release.version} must be installed, and other runs use or check it`,
			);
			// Another run may have installed it while we waited.
			state = installState(release, home);
			if (state !== 'usable' && state !== 'check timed out') {
				say(`n8n@${release.version} in ${home}: ${state}`);
				installer(release, home);
				state = installState(release, home);
			}
			lock.take('shared', `another run installs n8n@${release.version}`);
			if (state !== 'usable' && state !== 'check timed out') {
				throw new Error(
					`n8n@${release.version} was installed into ${home} but ${state} under Node ${release.nodeMajor}`,
				);
			}
		}
		if (state === 'check timed out') {
			throw new Error(
				`Could not check n8n@${release.version} in ${home}: loading its native modules took over 2 minutes (a loaded machine?). Nothing was reinstalled; try again.`,
			);
		}
		usable = true;
	} finally {
		// A run that cannot use the release holds no lock on it.
		if (!usable) lock.release();
	}
	const installation = installationAt(release, home);
	checked.set(release.version, installation);
	return installation;
}

function install(release: N8nRelease, home: string) {
	const node = nodeFor(release.nodeMajor);
	say(
		`installing n8n@${release.version} for Node ${release.nodeMajor} into ${home} (first time only: about 5 minutes)`,
	);
	rmSync(join(home, 'node_modules'), { recursive: true, force: true });
	mkdirSync(home, { recursive: true });
	const manifest = {
		private: true,
		description: 'n8n for the end-to-end tests of n8n-nodes-invoicing-assets',
		dependencies: { n8n: release.version },
		overrides: release.overrides,
	};
	writeFileSync(join(home, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
	rmSync(join(home, 'package-lock.json'), { force: true });
	npm(home, node, ['install', '--ignore-scripts', '--no-save']);
	npm(home, node, ['rebuild', 'isolated-vm', 'sqlite3', '--ignore-scripts=false']);
}
