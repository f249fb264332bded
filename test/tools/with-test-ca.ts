/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/* eslint-disable @n8n/community-nodes/no-dangerous-functions -- test tooling: runs the given command */
/**
 * Runs a command with a test certificate authority trusted by every Node process it starts:
 *
 *   tsx test/tools/with-test-ca.ts <command...>
 *
 * Reuses the CA in INVOICING_SIM_CA_DIR when that folder holds ca.pem and ca.key; otherwise
 * creates one in a fresh temporary folder. The command gets INVOICING_SIM_CA_DIR=<dir> and
 * NODE_EXTRA_CA_CERTS=<dir>/ca.pem, or, when NODE_EXTRA_CA_CERTS was already set (a system or
 * proxy bundle), a temporary bundle of that file plus ca.pem, so nothing trusted before is lost.
 * Node reads NODE_EXTRA_CA_CERTS only at start, so the CA must exist before jest (or n8n) starts.
 * SIGINT and SIGTERM are forwarded; the exit code is the command's; temporary files are removed.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { createCertificateAuthority, findCertificateAuthority } from '../simulator/tls';

const CA_DIR_ENV = 'INVOICING_SIM_CA_DIR';

function main() {
	const [command, ...args] = process.argv.slice(2);
	if (!command) {
		process.stderr.write('usage: tsx test/tools/with-test-ca.ts <command> [args...]\n');
		process.exit(2);
	}
	const existingDir = process.env[CA_DIR_ENV];
	const existing = existingDir ? findCertificateAuthority(existingDir) : undefined;
	let createdDir: string | undefined;
	let caCertPath: string;
	let caDir: string;
	if (existing && existingDir) {
		caDir = existingDir;
		caCertPath = existing.certPath;
	} else {
		createdDir = mkdtempSync(join(tmpdir(), 'invoicing-test-ca-'));
		caDir = createdDir;
		caCertPath = createCertificateAuthority(createdDir).certPath;
	}
	let bundleDir: string | undefined;
	let extraCaCerts = caCertPath;
	const inherited = process.env.NODE_EXTRA_CA_CERTS;
	if (inherited && inherited !== caCertPath && existsSync(inherited)) {
		const inheritedPems = readFileSync(inherited, 'utf8');
		const caPem = readFileSync(caCertPath, 'utf8');
		if (inheritedPems.includes(caPem.trim())) {
			extraCaCerts = inherited;
		} else {
			bundleDir = mkdtempSync(join(tmpdir(), 'invoicing-test-trust-'));
			extraCaCerts = join(bundleDir, 'trust.pem');
			writeFileSync(extraCaCerts, `${inheritedPems.trimEnd()}\n${caPem}`);
		}
	}
	const cleanup = () => {
		for (const dir of [createdDir, bundleDir]) {
			if (dir) rmSync(dir, { recursive: true, force: true });
		}
		createdDir = undefined;
		bundleDir = undefined;
	};

	const child = spawn(command, args, {
		stdio: 'inherit',
		env: { ...process.env, NODE_EXTRA_CA_CERTS: extraCaCerts, [CA_DIR_ENV]: caDir },
	});
	const forward = (signal: NodeJS.Signals) => () => {
		if (child.exitCode === null && child.signalCode === null) child.kill(signal);
	};
	process.on('SIGINT', forward('SIGINT'));
	process.on('SIGTERM', forward('SIGTERM'));
	child.on('error', (error) => {
		process.stderr.write(`with-test-ca: cannot run ${command}: ${error.message}\n`);
		cleanup();
		process.exit(127);
	});
	child.on('exit', (code, signal) => {
		cleanup();
		if (signal) {
			process.exit(128 + signalNumber(signal));
		}
		process.exit(code ?? 1);
	});
}

function signalNumber(signal: NodeJS.Signals): number {
	const numbers: Partial<Record<NodeJS.Signals, number>> = {
		SIGHUP: 1,
		SIGINT: 2,
		SIGKILL: 9,
		SIGTERM: 15,
	};
	return numbers[signal] ?? 1;
}

main();
