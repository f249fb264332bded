/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/* eslint-disable @n8n/community-nodes/no-dangerous-functions -- test tooling: builds and packs the package */
/**
 * The package as users get it: built, packed with `npm pack`, and unpacked where n8n looks for
 * community packages (`<user folder>/.n8n/nodes/node_modules/<name>`).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

export const REPOSITORY = resolve(__dirname, '../..');

export const PACKAGE_NAME = (
	JSON.parse(readFileSync(join(REPOSITORY, 'package.json'), 'utf8')) as { name: string }
).name;

function run(command: string, args: string[], cwd = REPOSITORY): string {
	return execFileSync(command, args, {
		cwd,
		encoding: 'utf8',
		stdio: ['ignore', 'pipe', 'inherit'],
		env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` },
	});
}

/**
 * A tarball packed once for a whole run, used as it is (`.ci/run` packs one after its build step:
 * its suites, some side by side, never build into dist/ at the same time).
 */
export const PACKED_PACKAGE_ENV = 'INVOICING_PACKED_PACKAGE';

let packed: string | undefined;

/** Builds the package and packs it once per process; returns the tarball's path. */
export function packPackage(): string {
	const given = process.env[PACKED_PACKAGE_ENV];
	if (given) return given;
	if (packed) return packed;
	run('npm', ['run', '--silent', 'build']);
	const destination = mkdtempSync(join(tmpdir(), 'invoicing-assets-pack-'));
	process.once('exit', () => rmSync(destination, { recursive: true, force: true }));
	const output = run('npm', ['pack', '--silent', '--pack-destination', destination]);
	const tarball = output.trim().split('\n').pop() ?? '';
	packed = join(destination, tarball);
	return packed;
}

/**
 * Removes the packed tarball's folder (also done at process exit, which jest's sandbox does not
 * report to test files: suites call this from afterAll).
 */
export function disposePackedPackage() {
	if (!packed) return;
	rmSync(dirname(packed), { recursive: true, force: true });
	packed = undefined;
}

/** Installs the packed package as n8n's community-package installer would, without its peers. */
export function installPackage(userFolder: string, tarball = packPackage()): string {
	const target = join(userFolder, '.n8n/nodes/node_modules', PACKAGE_NAME);
	mkdirSync(target, { recursive: true });
	run('tar', ['-xzf', tarball, '-C', target, '--strip-components=1']);
	return target;
}
