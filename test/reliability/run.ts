/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/**
 * `npm run reliability`: load, faults and abuse, measured against the real n8n 2.41.1 and the
 * simulator. Prints ONE table on stdout: each figure, its goal, met or not; progress goes
 * to stderr.
 *
 *   npm run reliability                  full sizes (about 55–75 minutes on 2 cores; the polling soak 15)
 *   npm run reliability -- --ci          CI sizes (about 13–16 minutes on a quiet machine, 27 at a load average of 8–14;
 *                                        the polling soak 6; return-all and the minimal-trigger comparison about 2), as assertions; ends with a jest-style
 *                                        "Tests: N failed, M passed, T total" line for .ci/run
 *   npm run reliability -- --only=fuzz,keys    some checks only (ids below)
 *   npm run reliability -- --only=polling      the polling soak only
 *   npm run reliability -- --skip=hygiene      all checks but some (.ci/run scans for secrets last)
 *   npm run reliability -- --ci --sizes=returnAllInvoices=5000,comparisonDeliveries=400
 *                                        some sizes changed (names in support.ts's Sizes)
 *   npm run reliability -- --ci --judge-speed  speed goals judged at CI size too
 *
 * Speed goals (latency and wall-time ratios) are judged at full size only; at CI size they are
 * reported. Every run uses marker secrets (see test/simulator/secret-record.ts) and ends with the
 * secret-hygiene scan of everything it and the test suites wrote (under .ci/run, the suites that
 * ran earlier in the same CI run: see hygiene.ts). Exit code 1 when a goal is missed.
 * KEEP_WORK=1 keeps the run's temporary folder (it holds throw-away test secrets).
 * Everything the run writes to stdout and stderr is also kept in that folder for the secret scan,
 * and passes through `printable` first. Ctrl-C (SIGINT) or SIGTERM stops every n8n and simulator
 * the run started and removes its folders (test/n8n/shutdown.ts).
 */
import '../harness/setup-env';

import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';

import { ARTIFACTS_DIR_ENV } from '../n8n/artifacts';
import { N8nInstance } from '../n8n/instance';
import { handleSignals, onShutdown, runCleanups } from '../n8n/shutdown';
import {
	describeViolations,
	SECRET_MARKER_ENV,
	SECRET_RECORD_DIR_ENV,
	takeContractViolations,
} from '../simulator';
import { deliveriesCheck } from './deliveries';
import { fuzzCheck } from './fuzz';
import { hygieneCheck, SCAN_DIR_ENV, writeOwnRecords } from './hygiene';
import { pollingSoakCheck } from './polling';
import { Report } from './report';
import { returnAllCheck } from './return-all';
import { defaultModeCyclesCheck, soakCheck } from './soak';
import {
	CI_SIZES,
	FULL_SIZES,
	OWN_OUTPUT_FILE,
	printable,
	type RunContext,
	type Sizes,
} from './support';
import { versusHttpRequestCheck } from './versus-http-request';

interface Check {
	id: string;
	item: string;
	usesMainN8n: boolean;
	run: (ctx: RunContext) => Promise<void>;
}

const CHECKS: Check[] = [
	{ id: 'fuzz', item: '6 fuzzing', usesMainN8n: false, run: fuzzCheck },
	{ id: 'deliveries', item: '2 deliveries', usesMainN8n: true, run: deliveriesCheck },
	{ id: 'versus', item: '3 vs HTTP Request', usesMainN8n: true, run: versusHttpRequestCheck },
	{ id: 'return-all', item: '3 vs HTTP Request', usesMainN8n: true, run: returnAllCheck },
	{ id: 'publish', item: '1 soak', usesMainN8n: true, run: defaultModeCyclesCheck },
	{ id: 'soak', item: '1 soak', usesMainN8n: false, run: soakCheck },
	{ id: 'polling', item: '8 polling', usesMainN8n: false, run: pollingSoakCheck },
	{ id: 'hygiene', item: '7 secrets', usesMainN8n: false, run: hygieneCheck },
];

async function main() {
	const args = process.argv.slice(2);
	const ci = args.includes('--ci');
	const listed = (option: string) =>
		args
			.find((arg) => arg.startsWith(`--${option}=`))
			?.slice(option.length + 3)
			.split(',');
	const only = listed('only');
	const skip = listed('skip') ?? [];
	for (const id of [...(only ?? []), ...skip]) {
		if (!CHECKS.some((check) => check.id === id)) {
			throw new Error(
				`Unknown check ${id}; the checks are ${CHECKS.map((check) => check.id).join(', ')}`,
			);
		}
	}
	const sizes = { ...(ci ? CI_SIZES : FULL_SIZES) };
	for (const setting of listed('sizes') ?? []) {
		const [name, value] = setting.split('=');
		if (!(name in sizes) || !Number.isFinite(Number(value)) || Number(value) < 0) {
			throw new Error(
				`--sizes: ${setting} is not <size>=<number>; the sizes are ${Object.keys(sizes).join(', ')}`,
			);
		}
		sizes[name as keyof Sizes] = Number(value);
	}
	const checks = CHECKS.filter(
		(check) => (!only || only.includes(check.id)) && !skip.includes(check.id),
	);

	const workDir = mkdtempSync(join(tmpdir(), 'invoicing-reliability-'));
	// (The n8n-core user folder setup-env made goes when the process exits.)
	const removeFolders = () => {
		if (process.env.KEEP_WORK) process.stderr.write(`work folder kept: ${workDir}\n`);
		else rmSync(workDir, { recursive: true, force: true });
	};
	// Registered first, so that an interrupt removes the folders after n8n and the simulators stopped.
	onShutdown(removeFolders);
	handleSignals();
	// Marker secrets and records for the secret-hygiene scan, for every simulator and n8n of this
	// run. Under .ci/run the marker is the one every suite of the CI run used (hygiene.ts).
	// What this run writes for the scan goes to its work folder, or under .ci/run to the run's
	// scan folder, which the last step scans (the run's own folder is gone by then).
	process.env[SECRET_MARKER_ENV] ||= `Mk${randomBytes(5).toString('hex')}Mk`;
	const scanDir = process.env[SCAN_DIR_ENV];
	const ownDir = scanDir ? mkdtempSync(join(scanDir, 'reliability-')) : join(workDir, 'own');
	process.env[SECRET_RECORD_DIR_ENV] = join(ownDir, 'secrets');
	process.env[ARTIFACTS_DIR_ENV] = join(ownDir, 'n8n');
	mkdirSync(process.env[ARTIFACTS_DIR_ENV], { recursive: true });
	const ownOutput = join(ownDir, OWN_OUTPUT_FILE);
	const write = (stream: NodeJS.WriteStream, text: string) => {
		const safe = printable(text);
		appendFileSync(ownOutput, safe);
		stream.write(safe);
	};

	const report = new Report();
	const started = Date.now();
	let main: Promise<N8nInstance> | undefined;
	const ctx: RunContext = {
		ci,
		judgeSpeed: args.includes('--judge-speed'),
		sizes,
		report,
		workDir,
		ownDir,
		errorMessages: [],
		say: (text) =>
			write(
				process.stderr,
				`[reliability ${Math.round((Date.now() - started) / 1000)} s] ${text}\n`,
			),
		mainN8n: () =>
			(main ??= (async () => {
				const instance = new N8nInstance({
					name: 'reliability',
					env: { EXECUTIONS_DATA_PRUNE: 'false' },
					// The delivery-latency floor (deliveries.ts).
					minimalTrigger: true,
				});
				ctx.say('starting the main n8n (default publication mode)');
				await instance.start();
				return instance;
			})()),
	};
	const stopMain = async () => {
		const instance = await main?.catch(() => undefined);
		main = undefined;
		await instance?.dispose();
	};

	try {
		ctx.say(
			`${ci ? 'CI' : 'full'} sizes${listed('sizes') ? ` (changed: ${listed('sizes')?.join(', ')})` : ''}, Node ${process.version}, ${cpus().length} CPUs; checks: ${checks.map((check) => check.id).join(', ')}`,
		);
		for (const [index, check] of checks.entries()) {
			const checkStarted = Date.now();
			ctx.say(`${check.id}: start`);
			try {
				await check.run(ctx);
			} catch (error) {
				const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
				ctx.say(`${check.id}: FAILED: ${message}`);
				ctx.errorMessages.push(message);
				report.check(
					check.item,
					`check "${check.id}" ran to completion`,
					'no',
					'yes',
					false,
					(error as Error).message ?? String(error),
				);
			}
			// The simulators of this check saw every request, answer and delivery: none may break the contract.
			const violations = takeContractViolations();
			report.check(
				check.item,
				`check "${check.id}": simulator traffic outside the service contract`,
				violations.length,
				'0',
				violations.length === 0,
				violations.length > 0 ? printable(describeViolations(violations)) : undefined,
			);
			ctx.say(`${check.id}: done in ${Math.round((Date.now() - checkStarted) / 1000)} s`);
			if (!checks.slice(index + 1).some((next) => next.usesMainN8n)) await stopMain();
		}
	} finally {
		await stopMain();
		// For a later scan (.ci/run's last step): the errors the checks saw and the table.
		writeOwnRecords(ctx);
		// Whatever a check left running (a failure midway), then the folders.
		await runCleanups();
	}

	const minutes = ((Date.now() - started) / 60_000).toFixed(1);
	process.stdout.write(
		`\nReliability figures (${ci ? 'CI sizes' : 'full sizes'}, ${minutes} min, ${new Date().toISOString().slice(0, 10)}):\n\n`,
	);
	process.stdout.write(`${report.table(printable)}\n\n${report.testsLine()}\n`);
	process.exitCode = report.failed > 0 ? 1 : 0;
}

main().catch(async (error: Error) => {
	process.stderr.write(`${printable(error.stack ?? error.message)}\n`);
	await runCleanups();
	process.exit(1);
});
