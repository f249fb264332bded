/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/* eslint-disable @n8n/community-nodes/no-dangerous-functions -- test tooling: runs npm to install n8n */
/**
 * A real n8n, installed once into a cache folder outside the repository and reused while it
 * still loads under this Node. The steps are those that work with the npm registry alone:
 * pin linkedom, install without scripts, then build the two native modules for this Node.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

export const N8N_VERSION = '2.41.1';

const INSTALL_MANIFEST = {
	private: true,
	description: 'n8n for the end-to-end tests of n8n-nodes-invoicing-assets',
	dependencies: { n8n: N8N_VERSION },
	overrides: { linkedom: '0.18.13' },
};

export function cacheRoot(): string {
	return (
		process.env.INVOICING_ASSETS_CACHE ??
		join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'n8n-nodes-invoicing-assets')
	);
}

export interface N8nInstallation {
	home: string;
	/** The n8n CLI script, to run with `node`. */
	bin: string;
	/** The Node 24 binary that runs n8n (this process's). */
	node: string;
}

function say(message: string) {
	process.stderr.write(`[n8n install] ${message}\n`);
}

function installationAt(home: string): N8nInstallation {
	return { home, bin: join(home, 'node_modules/n8n/bin/n8n'), node: process.execPath };
}

/** True when n8n is the pinned version and its native modules load under this Node. */
export function isUsable(home: string): boolean {
	const packageJson = join(home, 'node_modules/n8n/package.json');
	if (!existsSync(packageJson)) return false;
	if (
		(JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }).version !== N8N_VERSION
	) {
		return false;
	}
	const probe = spawnSync(process.execPath, ['-e', "require('sqlite3'); require('isolated-vm')"], {
		cwd: home,
		stdio: 'ignore',
		timeout: 60_000,
	});
	return probe.status === 0;
}

function npm(home: string, args: string[]) {
	const started = Date.now();
	execFileSync('npm', args, {
		cwd: home,
		stdio: ['ignore', 'ignore', 'inherit'],
		env: {
			...process.env,
			PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
			npm_config_nodedir: dirname(dirname(process.execPath)),
			npm_config_yes: 'true',
			npm_config_audit: 'false',
			npm_config_fund: 'false',
			npm_config_loglevel: 'error',
		},
	});
	say(`npm ${args[0]} took ${Math.round((Date.now() - started) / 1000)} s`);
}

/** Returns a usable n8n, installing it (about 5 minutes, 3 GB) when the cache has none. */
export function ensureN8n(): N8nInstallation {
	const home = join(cacheRoot(), `n8n-${N8N_VERSION}`);
	if (isUsable(home)) return installationAt(home);

	say(`installing n8n@${N8N_VERSION} into ${home} (first time only: about 5 minutes)`);
	rmSync(join(home, 'node_modules'), { recursive: true, force: true });
	mkdirSync(home, { recursive: true });
	writeFileSync(join(home, 'package.json'), `${JSON.stringify(INSTALL_MANIFEST, null, 2)}\n`);
	rmSync(join(home, 'package-lock.json'), { force: true });
	npm(home, ['install', '--ignore-scripts', '--no-save']);
	npm(home, ['rebuild', 'isolated-vm', 'sqlite3', '--ignore-scripts=false']);
	if (!isUsable(home)) {
		throw new Error(
			`n8n@${N8N_VERSION} was installed into ${home} but does not load under Node ${process.version}`,
		);
	}
	return installationAt(home);
}
