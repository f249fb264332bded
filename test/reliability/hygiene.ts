/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/* eslint-disable @n8n/community-nodes/no-dangerous-functions -- runs the project's own test suites */
/**
 * Secret hygiene: no secret in anything a run leaves behind. The run (and the suites scanned with
 * it) use marker secrets: client secrets and tokens made up by the simulator start with a marker,
 * and every simulator records each secret it handles, delivery keys included
 * (test/simulator/secret-record.ts). Every n8n keeps its log, database, workflows and executions
 * when disposed (test/n8n/artifacts.ts). This check scans every place a secret could show up for
 * the marker and for each recorded value: test output, n8n's logs, executions and workflows
 * exported through the API, n8n's database files, the simulator's request and delivery logs, the
 * error messages the checks saw, and this run's own output (run.ts keeps a copy) and table.
 * A secret of characters outside base64url (a quoting service's test, echo-service.ts) is looked
 * for in every form a service quotes it in as well: URL- and form-encoded, JSON-escaped.
 *
 * The suites: `.ci/run` runs every suite once, already with this marker and with its records,
 * artifacts and output in the folder INVOICING_SECRET_SCAN_DIR names; that folder is scanned here
 * and nothing runs twice. Without it (`npm run reliability` on its own), this check runs the unit,
 * integration and end-to-end suites that way itself first.
 */
import { spawn } from 'node:child_process';
import {
	createWriteStream,
	existsSync,
	mkdirSync,
	readdirSync,
	readFileSync,
	statSync,
	writeFileSync,
} from 'node:fs';
import { basename, join } from 'node:path';

import { quotedForms } from '../harness/secrets';
import { ARTIFACTS_DIR_ENV, EXPORT_FAILED_FILE } from '../n8n/artifacts';
import { REPOSITORY } from '../n8n/package';
import { SECRET_MARKER_ENV, SECRET_RECORD_DIR_ENV } from '../simulator';
import { ECHO_SERVICE_DIR, echoingServiceCheck } from './echo-service';
import { OWN_OUTPUT_FILE, type RunContext } from './support';

const ITEM = '7 secrets';

/**
 * A folder of marker-secret runs made before this one (`.ci/run`): `output/<step>.output.txt`
 * (each step's stdout and stderr), `secrets/` (the simulators' records), `n8n/` (the n8n
 * artifacts).
 */
export const SCAN_DIR_ENV = 'INVOICING_SECRET_SCAN_DIR';

/** The suites whose outputs the scan must find there: `output/<file>.output.txt`, as .ci/run names them. */
const SCANNED_SUITES = [
	{ label: 'npm test', file: 'tests' },
	{ label: 'npm run test:e2e', file: 'e2e' },
];

/**
 * The error messages the checks saw and the table as it stands (before anything redacts it for
 * printing), into the run's own folder, where a scan finds them.
 */
export function writeOwnRecords(ctx: RunContext) {
	mkdirSync(ctx.ownDir, { recursive: true });
	writeFileSync(join(ctx.ownDir, 'error-messages.txt'), ctx.errorMessages.join('\n'));
	writeFileSync(join(ctx.ownDir, 'report-so-far.txt'), ctx.report.table());
}

interface SuiteRun {
	label: string;
	output: string;
	code: number;
	tests: string;
}

async function runSuite(
	ctx: RunContext,
	label: string,
	script: string[],
	dir: string,
): Promise<SuiteRun> {
	mkdirSync(dir, { recursive: true });
	const output = join(dir, 'output.txt');
	const stream = createWriteStream(output);
	ctx.say(`  hygiene: ${label} with marker secrets`);
	const code = await new Promise<number>((resolve) => {
		const child = spawn('npm', ['run', '--silent', ...script], {
			cwd: REPOSITORY,
			env: {
				...process.env,
				[SECRET_RECORD_DIR_ENV]: join(dir, 'secrets'),
				[ARTIFACTS_DIR_ENV]: join(dir, 'n8n'),
			},
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		child.stdout.pipe(stream, { end: false });
		child.stderr.pipe(stream, { end: false });
		child.on('close', (exitCode) => resolve(exitCode ?? 1));
	});
	await new Promise((resolve) => stream.end(resolve));
	const text = readFileSync(output, 'utf8');
	const tests = text.match(/^Tests:.*$/m)?.[0] ?? 'no "Tests:" line';
	return { label, output, code, tests };
}

function filesUnder(dir: string): string[] {
	if (!existsSync(dir)) return [];
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
		const path = join(dir, entry.name);
		return entry.isDirectory() ? filesUnder(path) : [path];
	});
}

/** Every secret the simulators recorded, by value. */
function recordedSecrets(files: string[]): Map<string, string> {
	const secrets = new Map<string, string>();
	for (const file of files.filter((path) => path.endsWith('.secrets'))) {
		for (const line of readFileSync(file, 'utf8').split('\n')) {
			const [kind, value] = line.split('\t');
			if (value && value.length >= 16) secrets.set(value, kind);
		}
	}
	return secrets;
}

/** The characters of base64url and of a delivery key (nonce.proof): a secret of these alone is found by its runs. */
const RUN_CHARACTERS = /^[A-Za-z0-9_.-]*$/;

/** A text as the scan reads files: its UTF-8 bytes as latin1. */
function asScanned(text: string): string {
	return Buffer.from(text, 'utf8').toString('latin1');
}

/**
 * Every form a quoting service gives each recorded secret of other characters (quotedForms), as
 * the scan reads it, with its kind and form: the runs of hitsIn cannot find those.
 */
function quotedFormsOf(secrets: Map<string, string>): Map<string, string> {
	const forms = new Map<string, string>();
	for (const [value, kind] of secrets) {
		if (RUN_CHARACTERS.test(value)) continue;
		for (const [form, name] of quotedForms(value)) forms.set(asScanned(form), `${kind} (${name})`);
	}
	return forms;
}

/** Occurrences of the marker and of any recorded secret in `text` (binary files read as latin1). */
function hitsIn(
	text: string,
	marker: string,
	secrets: Map<string, string>,
	lengths: number[],
	quoted: Map<string, string>,
): string[] {
	const hits: string[] = [];
	for (const [form, kind] of quoted) {
		for (let at = text.indexOf(form); at !== -1; at = text.indexOf(form, at + 1)) {
			hits.push(`${kind} at ${at}`);
		}
	}
	for (let at = text.indexOf(marker); marker && at !== -1; at = text.indexOf(marker, at + 1)) {
		hits.push(`marker at ${at}`);
	}
	// Runs of the characters secrets are made of: base64url, and the dot of a delivery key (nonce.proof).
	for (const run of text.matchAll(/[A-Za-z0-9_.-]{16,}/g)) {
		const word = run[0];
		for (const length of lengths) {
			for (let start = 0; start + length <= word.length; start++) {
				const kind = secrets.get(word.slice(start, start + length));
				if (kind && !word.includes(marker)) hits.push(`${kind} at ${(run.index ?? 0) + start}`);
			}
		}
	}
	return hits;
}

/** Runs the unit, integration and end-to-end suites with marker secrets, into the work folder. */
async function runSuites(ctx: RunContext) {
	const suitesDir = join(ctx.workDir, 'suites');
	const suites = [
		await runSuite(
			ctx,
			'unit and integration suites (npm test)',
			['test'],
			join(suitesDir, 'unit-integration'),
		),
		await runSuite(
			ctx,
			'end-to-end suite (npm run test:e2e)',
			['test:e2e'],
			join(suitesDir, 'e2e'),
		),
	];
	for (const suite of suites) {
		ctx.report.check(
			ITEM,
			`${suite.label} pass with marker secrets`,
			suite.tests.replace(/^Tests:\s*/, ''),
			'all pass',
			suite.code === 0,
		);
	}
}

/**
 * The suites ran before this run, with its marker (`.ci/run`): their outputs must be in `folder`,
 * and their simulators must have made client secrets with the marker.
 */
function checkEarlierSuites(ctx: RunContext, folder: string, marker: string) {
	const outputs = filesUnder(join(folder, 'output'))
		.filter((path) => path.endsWith('.output.txt'))
		.map((path) => basename(path, '.output.txt'));
	const missing = SCANNED_SUITES.filter((suite) => !outputs.includes(suite.file));
	ctx.report.check(
		ITEM,
		`steps run earlier with this run's marker secrets, scanned here (${SCAN_DIR_ENV})`,
		outputs.join(', ') || 'none',
		`${SCANNED_SUITES.map((suite) => suite.file).join(', ')} at least`,
		missing.length === 0,
		missing.length
			? `no output of ${missing.map((suite) => suite.label).join(', ')} in ${folder}/output`
			: undefined,
	);
	// Some tests give a client secret of their own; the ones the simulators made carry the marker.
	const secrets = recordedSecrets(filesUnder(folder));
	const clientSecrets = [...secrets].filter(([, kind]) => kind === 'clientSecret');
	const marked = clientSecrets.filter(([value]) => marker !== '' && value.startsWith(marker));
	ctx.report.check(
		ITEM,
		"client secrets those steps' simulators handled / carrying this run's marker",
		`${clientSecrets.length} / ${marked.length}`,
		'> 0 / > 0',
		marked.length > 0,
	);
}

export async function hygieneCheck(ctx: RunContext) {
	const marker = process.env[SECRET_MARKER_ENV] ?? '';
	const earlier = process.env[SCAN_DIR_ENV];
	if (earlier) checkEarlierSuites(ctx, earlier, marker);
	else await runSuites(ctx);
	await echoingServiceCheck(ctx);

	writeOwnRecords(ctx);
	const roots = earlier ? [ctx.workDir, earlier] : [ctx.workDir];
	const files = roots.flatMap(filesUnder);
	const named = (path: string) => {
		const root = roots.find((candidate) => path.startsWith(`${candidate}/`)) ?? '';
		return `${root === ctx.workDir ? '' : 'earlier: '}${path.slice(root.length + 1)}`;
	};
	const secrets = recordedSecrets(files);
	const lengths = [...new Set([...secrets.keys()].map((value) => value.length))];
	const quoted = quotedFormsOf(secrets);
	const kinds = new Map<string, number>();
	for (const kind of secrets.values()) kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
	ctx.report.info(
		ITEM,
		'secrets the scan looks for',
		`marker + ${[...kinds].map(([kind, n]) => `${n} ${kind}s`).join(', ')}`,
		'—',
		'client secrets and tokens carry the marker; delivery keys are made by the trigger and recorded by the simulator when a subscription is created',
	);

	// The scanner itself must find what it looks for: a marker token and a recorded delivery key,
	// planted in a text the way a log would hold them, and a secret of other characters as a
	// quoting service gives it, form-encoded and JSON-escaped.
	const deliveryKey = [...secrets].find(([, kind]) => kind === 'deliveryKey')?.[0] ?? '';
	const odd =
		[...secrets].find(
			([value, kind]) => kind === 'clientSecret' && !RUN_CHARACTERS.test(value),
		)?.[0] ?? '';
	const planted = [
		`GET /webhook/x?apiKey=${deliveryKey}&a=1`,
		`Authorization: Bearer ${marker}tkCANARY`,
		`{"error_description":"${JSON.stringify(new URLSearchParams({ client_secret: odd }).toString()).slice(1, -1)}"}`,
		`said: ${JSON.stringify(odd)}`,
	];
	const found = planted.filter(
		(text) => hitsIn(asScanned(text), marker, secrets, lengths, quoted).length > 0,
	).length;
	ctx.report.check(
		ITEM,
		'the scan finds a planted token, delivery key, and a secret of other characters form-encoded and JSON-escaped',
		`${found} / ${planted.length}`,
		'all',
		found === planted.length && deliveryKey !== '' && odd !== '',
		odd === ''
			? 'no client secret of other characters was recorded (echo-service.ts makes one)'
			: undefined,
	);

	// An n8n whose export through the API failed left nothing of its own to scan there: the two
	// exported places fail on it instead of scanning what is left.
	const exportFailures = files
		.filter((path) => path.endsWith(EXPORT_FAILED_FILE))
		.map((path) => `${named(path)}: ${readFileSync(path, 'utf8').trim().slice(0, 160)}`);
	const places: Array<{ label: string; test: (path: string) => boolean; exported?: boolean }> = [
		{
			label: 'test output (the suites’ stdout and stderr)',
			test: (path) => path.endsWith('output.txt'),
		},
		{ label: "n8n's logs", test: (path) => path.endsWith('n8n.log') },
		{
			label: 'executions exported through the API (with data)',
			test: (path) => path.endsWith('executions.json'),
			exported: true,
		},
		{
			label: 'workflows exported through the API (static data included)',
			test: (path) => path.endsWith('workflows.json'),
			exported: true,
		},
		{ label: "n8n's database files", test: (path) => /database\.sqlite(-wal)?$/.test(path) },
		{
			label: "the simulator's request and delivery logs",
			test: (path) => path.endsWith('.log.json'),
		},
		{
			label: 'error messages seen by the reliability checks',
			test: (path) => path.endsWith('error-messages.txt'),
		},
		{
			label:
				'the echoing service’s runs: errors, items, executions as n8n-core keeps them, its log',
			test: (path) => path.includes(`/${ECHO_SERVICE_DIR}/`),
		},
		{
			label: 'this run’s own stdout and stderr, and its table so far',
			test: (path) => path.endsWith(OWN_OUTPUT_FILE) || path.endsWith('report-so-far.txt'),
		},
	];
	for (const place of places) {
		const scanned = files.filter(place.test);
		const found: string[] = [];
		let bytes = 0;
		for (const file of scanned) {
			const text = readFileSync(file, 'latin1');
			bytes += statSync(file).size;
			for (const hit of hitsIn(text, marker, secrets, lengths, quoted))
				found.push(`${named(file)}: ${hit}`);
		}
		const failedExports = place.exported ? exportFailures : [];
		ctx.report.check(
			ITEM,
			`secret hits in ${place.label} (${scanned.length} files, ${(bytes / 1024 / 1024).toFixed(1)} MB)`,
			failedExports.length
				? `${found.length}, ${failedExports.length} exports failed`
				: found.length,
			'0',
			found.length === 0 && scanned.length > 0 && failedExports.length === 0,
			found.length
				? found.slice(0, 3).join(' | ')
				: failedExports.length
					? `export failed: ${failedExports.slice(0, 3).join(' | ')}`
					: scanned.length === 0
						? 'nothing to scan'
						: undefined,
		);
	}
}
