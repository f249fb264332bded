/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/* eslint-disable @n8n/community-nodes/no-dangerous-functions -- test tooling: runs tar on the packed package */
/**
 * `npm run verify`: the checks n8n's reviewers and the verified-package scan make, run on the
 * source tree and on the package exactly as `npm pack` builds it.
 *
 * - n8n's scanner (`@n8n/scan-community-package`, `analyzePackage`): the source tree with its
 *   SOURCE_FILE_PATTERNS, and the unpacked tarball with `**\/*.js` and `package.json`, as the
 *   scanner's own CLI does for a published package. Both must report 0 errors. A throw-away
 *   package with a known violation must fail, so a scanner that silently checks nothing fails too.
 * - package.json: no runtime dependencies, strict mode, every listed node and credential packed.
 * - nodes/ and credentials/: imports only n8n-workflow, crypto and relative files; no process,
 *   require, timers, globals or `$env` (TypeScript AST, so comments and strings do not count);
 *   the packed JavaScript requires nothing else either.
 * - the credential's documentationUrl and the codex files' documentation URLs are full https
 *   URLs whose #anchors exist in README.md; codex files have categories n8n knows and aliases.
 * - every themed icon (light and dark) exists as an SVG in the source and in the packed dist.
 * - the documents (README.md, CONTRIBUTING.md, docs/**\/*.md; test/verify/markdown.ts): every link
 *   between them reaches an existing file and heading; every image exists, each docs/images PNG is
 *   shown, and the README's are absolute URLs (npm's page shows no relative picture); no table row
 *   over 400 characters, no cell over 200; README.md at most 20 KiB; the troubleshooting's quoted
 *   messages are the code's, and the README's each have their entry in docs/troubleshooting.md;
 *   the exactly-once recipe of docs/repeated-deliveries.md is its example workflow's; every
 *   N8N_COMMUNITY_PACKAGES value is one n8n reads, pinning package.json's version; the README's
 *   try-it commands are .ci/run's.
 * - neither docs/ nor any PNG is packed.
 *
 * Prints one line per check and a closing `Checks: N passed, M failed`; exits 1 on a failure.
 */
import { execFileSync } from 'node:child_process';
import {
	existsSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	readdirSync,
	rmSync,
	statSync,
	writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';

import type { ICredentialType, INodeType, INodeTypeDescription } from 'n8n-workflow';
import ts from 'typescript';

import { InvoicingAssetsApi } from '../../credentials/InvoicingAssetsApi.credentials';
import { InvoicingAssets } from '../../nodes/InvoicingAssets/InvoicingAssets.node';
import { InvoicingAssetsPollingTrigger } from '../../nodes/InvoicingAssets/InvoicingAssetsPollingTrigger.node';
import { InvoicingAssetsTrigger } from '../../nodes/InvoicingAssets/InvoicingAssetsTrigger.node';
import { packPackage, REPOSITORY } from '../n8n/package';
import {
	type DocFile,
	brokenLinks,
	documentationFiles,
	markdownAnchors,
	markdownLinks,
	quotedMessages,
	resolveLink,
	section,
	wideTables,
} from './markdown';

interface PackageJson {
	name: string;
	version?: string;
	homepage?: string;
	dependencies?: Record<string, string>;
	optionalDependencies?: Record<string, string>;
	bundleDependencies?: unknown;
	bundledDependencies?: unknown;
	peerDependencies?: Record<string, string>;
	scripts?: Record<string, string>;
	n8n?: { n8nNodesApiVersion?: number; strict?: boolean; nodes?: string[]; credentials?: string[] };
}

interface Codex {
	node?: string;
	categories?: string[];
	alias?: string[];
	resources?: {
		primaryDocumentation?: Array<{ url: string }>;
		credentialDocumentation?: Array<{ url: string }>;
	};
}

/** Categories of n8n's node panel, as n8n-nodes-base 2.41 uses them in its codex files. */
const N8N_CATEGORIES = [
	'AI',
	'Analytics',
	'Communication',
	'Core Nodes',
	'Data & Storage',
	'Developer Tools',
	'Development',
	'Finance & Accounting',
	'HITL',
	'Marketing',
	'Miscellaneous',
	'Productivity',
	'Sales',
	'Utility',
];

/** The README is the storefront on npm and GitHub: what the package does and a first workflow. */
const README_MAX_BYTES = 20 * 1024;

/** Words users type in the node panel that must find the nodes. */
const REQUIRED_ALIASES = ['invoice', 'bill', 'billing', 'asset'];

/** Imports node code may use (besides relative files). */
const ALLOWED_IMPORTS = new Set(['n8n-workflow', 'crypto', 'node:crypto']);

/** Names node code must not reach: n8n's restricted globals, plus require and eval. */
const FORBIDDEN_IDENTIFIERS = new Set([
	'process',
	'require',
	'eval',
	'global',
	'globalThis',
	'__dirname',
	'__filename',
	'setTimeout',
	'setInterval',
	'setImmediate',
	'clearTimeout',
	'clearInterval',
	'clearImmediate',
	'importScripts',
]);

const results: Array<{ name: string; ok: boolean; detail: string }> = [];

function record(name: string, problems: string[], okDetail: string) {
	const ok = problems.length === 0;
	results.push({ name, ok, detail: ok ? okDetail : problems.join('\n      ') });
	process.stdout.write(`${ok ? '✓' : '✗'} ${name}: ${ok ? okDetail : ''}\n`);
	if (!ok) process.stdout.write(`      ${problems.join('\n      ')}\n`);
}

function escapeRegExp(text: string): string {
	return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function readJson<T>(path: string): T {
	return JSON.parse(readFileSync(path, 'utf8')) as T;
}

function filesUnder(dir: string, accept: (path: string) => boolean): string[] {
	if (!existsSync(dir)) return [];
	const found: string[] = [];
	for (const entry of readdirSync(dir, { withFileTypes: true })) {
		const path = join(dir, entry.name);
		if (entry.isDirectory()) found.push(...filesUnder(path, accept));
		else if (accept(path)) found.push(path);
	}
	return found.sort();
}

/** Problems with a documentation URL: not https, not this repository, or an unknown README anchor. */
function documentationUrlProblems(
	what: string,
	url: string | undefined,
	repositoryUrl: string,
	anchors: Set<string>,
): string[] {
	if (!url) return [`${what}: missing`];
	let parsed: URL;
	try {
		parsed = new URL(url);
	} catch {
		return [`${what}: not a full URL: ${url}`];
	}
	const problems: string[] = [];
	if (parsed.protocol !== 'https:' || !parsed.hostname) problems.push(`${what}: not https: ${url}`);
	if (`${parsed.origin}${parsed.pathname}` !== repositoryUrl) {
		problems.push(`${what}: not the repository's README (${repositoryUrl}): ${url}`);
	}
	const anchor = decodeURIComponent(parsed.hash.replace(/^#/, ''));
	if (!anchor) problems.push(`${what}: no #anchor into the README: ${url}`);
	else if (!anchors.has(anchor)) problems.push(`${what}: README.md has no heading #${anchor}`);
	return problems;
}

/** Restricted imports, globals and `$env` expressions in one TypeScript file of node code. */
function nodeCodeProblems(file: string): string[] {
	const source = ts.createSourceFile(
		file,
		readFileSync(file, 'utf8'),
		ts.ScriptTarget.Latest,
		true,
	);
	const problems: string[] = [];
	const where = (node: ts.Node) => {
		const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
		return `${relative(REPOSITORY, file)}:${line + 1}`;
	};
	const visit = (node: ts.Node) => {
		if (
			(ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
			node.moduleSpecifier &&
			ts.isStringLiteral(node.moduleSpecifier)
		) {
			const specifier = node.moduleSpecifier.text;
			if (!specifier.startsWith('.') && !ALLOWED_IMPORTS.has(specifier)) {
				problems.push(`${where(node)} imports '${specifier}'`);
			}
		}
		if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
			problems.push(`${where(node)} uses a dynamic import()`);
		}
		if (ts.isIdentifier(node) && FORBIDDEN_IDENTIFIERS.has(node.text) && isValueReference(node)) {
			problems.push(`${where(node)} uses ${node.text}`);
		}
		if (
			(ts.isStringLiteral(node) ||
				ts.isNoSubstitutionTemplateLiteral(node) ||
				ts.isTemplateHead(node)) &&
			/\$env\b|process\.env/.test(node.text)
		) {
			problems.push(`${where(node)} reads the environment in an expression`);
		}
		ts.forEachChild(node, visit);
	};
	visit(source);
	return problems;
}

/** False for identifiers that only name a property, member or declaration (`x.process`, `{ process: 1 }`). */
function isValueReference(node: ts.Identifier): boolean {
	const parent = node.parent;
	if (ts.isPropertyAccessExpression(parent) && parent.name === node) return false;
	if (ts.isQualifiedName(parent) && parent.right === node) return false;
	if (
		(ts.isPropertyAssignment(parent) ||
			ts.isPropertyDeclaration(parent) ||
			ts.isPropertySignature(parent) ||
			ts.isMethodDeclaration(parent) ||
			ts.isMethodSignature(parent) ||
			ts.isEnumMember(parent) ||
			ts.isGetAccessor(parent) ||
			ts.isSetAccessor(parent)) &&
		parent.name === node
	) {
		return false;
	}
	return true;
}

/** A themed icon's two files, resolved against the folder of the file that declares it. */
function iconFiles(
	icon: unknown,
	baseDir: string,
): { light?: string; dark?: string; problem?: string } {
	if (typeof icon !== 'object' || icon === null) {
		return { problem: `icon is ${JSON.stringify(icon)}, not { light, dark }` };
	}
	const { light, dark } = icon as { light?: unknown; dark?: unknown };
	const resolveFile = (value: unknown) =>
		typeof value === 'string' && value.startsWith('file:')
			? resolve(baseDir, value.slice('file:'.length))
			: undefined;
	return { light: resolveFile(light), dark: resolveFile(dark) };
}

function svgProblems(what: string, path: string | undefined): string[] {
	if (!path) return [`${what}: not a file: reference`];
	if (!existsSync(path)) return [`${what}: ${path} does not exist`];
	const text = readFileSync(path, 'utf8');
	if (!/^\s*(<\?xml[^>]*>\s*)?<svg[\s>]/.test(text)) return [`${what}: ${path} is not an SVG`];
	return [];
}

interface WorkflowStep {
	uses?: string;
	run?: string;
	with?: Record<string, unknown>;
}

interface GithubWorkflow {
	on?: Record<string, unknown>;
	permissions?: Record<string, string>;
	jobs?: Record<string, { permissions?: Record<string, string>; steps?: WorkflowStep[] }>;
}

/** A YAML parser that ESLint (a devDependency) brings along: @eslint/eslintrc's js-yaml. */
function yamlParser(): { load(text: string): unknown } {
	const fromEslint = createRequire(require.resolve('eslint/package.json'));
	const fromEslintrc = createRequire(fromEslint.resolve('@eslint/eslintrc/package.json'));
	return fromEslintrc('js-yaml') as { load(text: string): unknown };
}

/** The workflows parse, use only well-formed ${{ }} expressions, and hold the expected steps. */
function workflowProblems(): string[] {
	const problems: string[] = [];
	const yaml = yamlParser();
	const load = (name: string): GithubWorkflow | undefined => {
		const path = join(REPOSITORY, '.github/workflows', name);
		if (!existsSync(path)) {
			problems.push(`.github/workflows/${name} is missing`);
			return undefined;
		}
		const text = readFileSync(path, 'utf8');
		const withoutExpressions = text.replace(/\$\{\{ [^{}]+? \}\}/g, '');
		if (/\{\{|\}\}/.test(withoutExpressions)) {
			problems.push(`${name}: "{{" or "}}" outside a well-formed \${{ expression }}`);
		}
		try {
			return yaml.load(text) as GithubWorkflow;
		} catch (error) {
			problems.push(`${name} is not valid YAML: ${(error as Error).message.split('\n')[0]}`);
			return undefined;
		}
	};
	const steps = (workflow: GithubWorkflow) =>
		Object.values(workflow.jobs ?? {}).flatMap((job) => job.steps ?? []);
	const runs = (workflow: GithubWorkflow) => steps(workflow).map((step) => (step.run ?? '').trim());
	const nodeVersions = (workflow: GithubWorkflow) =>
		steps(workflow)
			.filter((step) => step.uses?.startsWith('actions/setup-node@'))
			.map((step) => String(step.with?.['node-version']));

	const ci = load('ci.yml');
	if (ci) {
		if (!steps(ci).some((step) => step.uses?.startsWith('actions/checkout@'))) {
			problems.push('ci.yml has no checkout step');
		}
		if (!nodeVersions(ci).includes('24')) problems.push('ci.yml does not set up Node 24');
		// One CI: GitHub runs .ci/run itself, never a second list of steps that could drift from it.
		if (!runs(ci).includes('bash .ci/run')) problems.push('ci.yml does not run bash .ci/run');
		const ownSteps = runs(ci).filter((run) => /\bnpm (ci|test|run)\b/.test(run));
		if (ownSteps.length > 0) {
			problems.push(`ci.yml runs steps of its own beside .ci/run: ${ownSteps.join(', ')}`);
		}
	}
	const publish = load('publish.yml');
	if (publish) {
		if (!JSON.stringify(publish.on?.push ?? {}).includes('tags')) {
			problems.push('publish.yml is not started by pushed tags');
		}
		const idToken = [publish, ...Object.values(publish.jobs ?? {})].some(
			(scope) => scope.permissions?.['id-token'] === 'write',
		);
		if (!idToken) problems.push('publish.yml lacks "id-token: write" (provenance)');
		if (!nodeVersions(publish).includes('24')) problems.push('publish.yml does not set up Node 24');
		const commands = runs(publish).flatMap((run) => run.split('\n').map((line) => line.trim()));
		if (!commands.includes('npm run release')) {
			problems.push('publish.yml does not run npm run release (n8n-node release)');
		}
		// setup-node's registry-url writes an empty token when NPM_TOKEN is unset, which stops npm
		// from using trusted publishing.
		if (steps(publish).some((step) => step.with?.['registry-url'] !== undefined)) {
			problems.push('publish.yml sets registry-url, which breaks npm trusted publishing');
		}
	}
	return problems;
}

/**
 * Each N8N_COMMUNITY_PACKAGES value the documents give is one n8n 2.41 reads (a JSON array of
 * { name, version, checksum? }; docs/queue-mode.md) and, like every `<name>@<version>` they quote,
 * names this package at package.json's version.
 */
function communityPackagesProblems(documents: DocFile[], manifest: PackageJson): string[] {
	const problems: string[] = [];
	for (const file of documents) {
		for (const [, value] of file.text.matchAll(/N8N_COMMUNITY_PACKAGES='([^']*)'/g)) {
			let entries: unknown;
			try {
				entries = JSON.parse(value);
			} catch {
				problems.push(`${file.path}: N8N_COMMUNITY_PACKAGES='${value}' is not JSON`);
				continue;
			}
			const ours = Array.isArray(entries)
				? entries.find(
						(entry: Record<string, unknown>) =>
							typeof entry === 'object' &&
							entry !== null &&
							Object.keys(entry).every((key) => ['name', 'version', 'checksum'].includes(key)) &&
							entry.name === manifest.name,
					)
				: undefined;
			if (!ours) {
				problems.push(
					`${file.path}: N8N_COMMUNITY_PACKAGES='${value}' has no entry {"name":"${manifest.name}","version":…} as n8n reads it`,
				);
			} else if (ours.version !== manifest.version) {
				problems.push(
					`${file.path}: N8N_COMMUNITY_PACKAGES pins ${String(ours.version)}, package.json is at ${manifest.version}`,
				);
			}
		}
		for (const [quoted, version] of file.text.matchAll(
			new RegExp(`${escapeRegExp(manifest.name)}@(\\d+\\.\\d+\\.\\d+[\\w.-]*)`, 'g'),
		)) {
			if (version !== manifest.version) {
				problems.push(`${file.path} quotes ${quoted}, package.json is at ${manifest.version}`);
			}
		}
	}
	return problems;
}

/**
 * The README's "try it" commands are what .ci/run runs on a fresh clone: each one itself, but
 * `npm start`, which the demo smoke check runs (`npm run test:demo`).
 */
function readmeCommandProblems(readme: string, manifest: PackageJson): string[] {
	const ciRun = readFileSync(join(REPOSITORY, '.ci/run'), 'utf8');
	const tryIt = /\*\*Try it without an account:\*\*[\s\S]*?`([^`]*&&[^`]*)`/.exec(readme)?.[1];
	if (!tryIt) return ['README.md: no "Try it without an account" commands (`… && …`)'];
	const problems: string[] = [];
	for (const command of tryIt.split('&&').map((part) => part.trim())) {
		const script = /^npm (?:run )?([\w:-]+)$/.exec(command)?.[1];
		if (!script || !manifest.scripts?.[script]) {
			problems.push(`README.md: "${command}" is no npm script of package.json`);
		} else if (command === 'npm start') {
			if (!/\bnpm run test:demo\b/.test(ciRun))
				problems.push('.ci/run does not run npm run test:demo');
		} else if (!new RegExp(`^[\t ]*step "[^"]*" ${escapeRegExp(command)}$`, 'm').test(ciRun)) {
			problems.push(`.ci/run has no step that runs "${command}" as the README gives it`);
		}
	}
	return problems;
}

/**
 * The exactly-once recipe as docs/repeated-deliveries.md tells it (the table, the Postgres node's
 * query and parameter, the Filter's condition) is docs/examples/new-invoice-exactly-once.json,
 * which the queue suite runs.
 */
function exactlyOnceRecipeProblems(): string[] {
	const doc = readFileSync(join(REPOSITORY, 'docs/repeated-deliveries.md'), 'utf8');
	const example = readJson<{
		nodes: Array<{ name: string; type: string; parameters: Record<string, unknown> }>;
	}>(join(REPOSITORY, 'docs/examples/new-invoice-exactly-once.json'));
	const sql = [...doc.matchAll(/```sql\n([\s\S]*?)```/g)].map(([, block]) =>
		block
			.split('\n')
			.map((line) => line.trim())
			.filter(Boolean)
			.join('\n'),
	);
	const table = /^CREATE TABLE (\w+)/.exec(
		sql.find((block) => block.startsWith('CREATE')) ?? '',
	)?.[1];
	const insert = sql.find((block) => block.startsWith('INSERT'));
	const recordNode = example.nodes.find((node) => node.type === 'n8n-nodes-base.postgres');
	const filterNode = example.nodes.find((node) => node.type === 'n8n-nodes-base.filter');
	const problems: string[] = [];
	if (!table) problems.push('docs/repeated-deliveries.md has no CREATE TABLE block');
	if (!insert) problems.push('docs/repeated-deliveries.md has no INSERT block');
	if (!recordNode || !filterNode) problems.push('the example has no Postgres or no Filter node');
	if (!insert || !recordNode || !filterNode || !table) return problems;
	if (recordNode.parameters.query !== insert) {
		problems.push(`${recordNode.name}'s query is not the INSERT of docs/repeated-deliveries.md`);
	}
	if (!insert.startsWith(`INSERT INTO ${table} `)) {
		problems.push(`the INSERT does not write to the documented table ${table}`);
	}
	const parameter = (recordNode.parameters.options as { queryReplacement?: string })
		.queryReplacement;
	const condition = JSON.stringify(filterNode.parameters.conditions);
	if (parameter !== '={{ $json.eventId }}' || !doc.includes('`{{ $json.eventId }}`')) {
		problems.push(
			`${recordNode.name}'s Query Parameters are not the documented {{ $json.eventId }}`,
		);
	}
	if (!condition.includes('={{ $json.event_id }}') || !doc.includes('`{{ $json.event_id }}`')) {
		problems.push(`${filterNode.name} does not test the documented {{ $json.event_id }}`);
	}
	return problems;
}

/** Every string the node code can produce, as an anchored pattern (`${…}` parts match anything). */
function sourceMessagePatterns(files: string[]): RegExp[] {
	const patterns: RegExp[] = [];
	for (const file of files) {
		const source = ts.createSourceFile(
			file,
			readFileSync(file, 'utf8'),
			ts.ScriptTarget.Latest,
			true,
		);
		const visit = (node: ts.Node) => {
			if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
				patterns.push(new RegExp(`^${escapeRegExp(node.text)}$`));
			} else if (ts.isTemplateExpression(node)) {
				const parts = [
					escapeRegExp(node.head.text),
					...node.templateSpans.map((span) => `.*?${escapeRegExp(span.literal.text)}`),
				];
				// Templates that are mostly placeholders would match any quote: keep those with words.
				const literal =
					node.head.text + node.templateSpans.map((span) => span.literal.text).join('');
				if (literal.replace(/\W/g, '').length >= 10)
					patterns.push(new RegExp(`^${parts.join('')}$`));
			}
			ts.forEachChild(node, visit);
		};
		visit(source);
	}
	return patterns;
}

async function main() {
	const started = Date.now();
	const work = mkdtempSync(join(tmpdir(), 'invoicing-verify-'));
	// The scanner creates a temporary folder when it is loaded: keep it inside ours.
	process.env.TMPDIR = work;
	try {
		await run(work);
	} finally {
		rmSync(work, { recursive: true, force: true });
	}
	const failed = results.filter((result) => !result.ok).length;
	process.stdout.write(
		`\nverify: ${results.length - failed} of ${results.length} checks passed in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
	);
	process.stdout.write(
		`Checks: ${results.length - failed} passed, ${failed} failed, ${results.length} total\n`,
	);
	process.exitCode = failed === 0 ? 0 : 1;
}

async function run(work: string) {
	const { analyzePackage, SOURCE_FILE_PATTERNS } = await import(
		'@n8n/scan-community-package/scanner/scanner.mjs'
	);
	const packageJson = readJson<PackageJson>(join(REPOSITORY, 'package.json'));
	const readme = readFileSync(join(REPOSITORY, 'README.md'), 'utf8');
	const anchors = markdownAnchors(readme);
	const repositoryUrl = (packageJson.homepage ?? '').replace(/#.*$/, '');

	// The package exactly as npm publishes it.
	const tarball = packPackage();
	const packed = join(work, 'package');
	mkdirSync(packed);
	execFileSync('tar', ['-xzf', tarball, '-C', packed, '--strip-components=1']);
	const packedFiles = filesUnder(packed, () => true).map((file) => relative(packed, file));
	const tarballBytes = statSync(tarball).size;
	const unpackedBytes = packedFiles.reduce(
		(sum, file) => sum + statSync(join(packed, file)).size,
		0,
	);

	// 1. n8n's scanner on the source tree and on the tarball.
	// The scanner's own glob, to count the files it lints.
	const scannerRequire = createRequire(require.resolve('@n8n/scan-community-package/package.json'));
	const glob = scannerRequire('fast-glob') as {
		sync(patterns: string[], options: { cwd: string; ignore: string[] }): string[];
	};
	const scan = async (name: string, dir: string, patterns: string[]) => {
		const files = glob.sync(patterns, {
			cwd: dir,
			ignore: ['node_modules/**', '**/package-lock.json'],
		});
		const result = await analyzePackage(dir, patterns);
		const problems = result.passed
			? files.length === 0
				? ['no files matched: the scan checked nothing']
				: []
			: [`${result.message ?? 'failed'}`, ...(result.details ?? '').trim().split('\n')];
		record(name, problems, `0 errors in ${files.length} files (${patterns.join(', ')})`);
	};
	await scan('n8n scanner, source tree', REPOSITORY, SOURCE_FILE_PATTERNS);
	await scan('n8n scanner, packed tarball', packed, ['**/*.js', 'package.json']);

	// The same scanner must fail a package that breaks its rules.
	const canary = join(work, 'canary');
	mkdirSync(join(canary, 'nodes/Canary'), { recursive: true });
	const canaryFile = join(canary, 'nodes/Canary/Canary.node.js');
	const canarySource =
		"'use strict';\nconsole.log(process.env.SECRET);\nsetTimeout(() => {}, 1);\n";
	writeFileSync(canaryFile, canarySource);
	const canaryResult = await analyzePackage(canary, ['**/*.js']);
	record(
		'n8n scanner rejects a known violation',
		canaryResult.passed
			? ['a node file using console, process.env and setTimeout passed the scan']
			: [],
		'console, process.env and setTimeout in a node file are reported',
	);

	// 2. package.json
	const packedJson = readJson<PackageJson>(join(packed, 'package.json'));
	const dependencyProblems: string[] = [];
	for (const [label, manifest] of [
		['package.json', packageJson],
		['packed package.json', packedJson],
	] as const) {
		for (const field of ['dependencies', 'optionalDependencies'] as const) {
			const names = Object.keys(manifest[field] ?? {});
			if (names.length > 0) dependencyProblems.push(`${label} ${field}: ${names.join(', ')}`);
		}
		if (manifest.bundleDependencies || manifest.bundledDependencies) {
			dependencyProblems.push(`${label} bundles dependencies`);
		}
		const peers = Object.keys(manifest.peerDependencies ?? {});
		if (peers.some((peer) => peer !== 'n8n-workflow')) {
			dependencyProblems.push(`${label} peerDependencies beyond n8n-workflow: ${peers.join(', ')}`);
		}
		for (const hook of ['preinstall', 'install', 'postinstall']) {
			if (manifest.scripts?.[hook]) dependencyProblems.push(`${label} has an ${hook} script`);
		}
	}
	record(
		'no runtime dependencies',
		dependencyProblems,
		'no dependencies, no install scripts; peer n8n-workflow only',
	);

	const manifestProblems: string[] = [];
	if (packedJson.n8n?.strict !== true) manifestProblems.push('n8n.strict is not true');
	if (packedJson.n8n?.n8nNodesApiVersion !== 1)
		manifestProblems.push('n8n.n8nNodesApiVersion is not 1');
	const listed = [...(packedJson.n8n?.nodes ?? []), ...(packedJson.n8n?.credentials ?? [])];
	for (const file of listed) {
		if (!existsSync(join(packed, file))) manifestProblems.push(`${file} is listed but not packed`);
	}
	if (listed.length === 0) manifestProblems.push('n8n.nodes and n8n.credentials are empty');
	record(
		'n8n section of package.json',
		manifestProblems,
		`strict; ${listed.length} listed files, all packed`,
	);

	// 3. node code: imports, globals, environment.
	const sourceFiles = [
		...filesUnder(join(REPOSITORY, 'nodes'), (path) => path.endsWith('.ts')),
		...filesUnder(join(REPOSITORY, 'credentials'), (path) => path.endsWith('.ts')),
	];
	record(
		'node code: no process, fs, require or environment access (source)',
		sourceFiles.length === 0
			? ['no .ts files found under nodes/ and credentials/']
			: sourceFiles.flatMap(nodeCodeProblems),
		`${sourceFiles.length} files import only n8n-workflow, crypto and relative files`,
	);
	const packedJs = packedFiles.filter((file) => file.endsWith('.js'));
	const requireProblems: string[] = [];
	for (const file of packedJs) {
		const text = readFileSync(join(packed, file), 'utf8');
		for (const match of text.matchAll(/\brequire\(\s*(["'`])([^"'`]*)\1\s*\)/g)) {
			const specifier = match[2];
			if (!specifier.startsWith('.') && !ALLOWED_IMPORTS.has(specifier)) {
				requireProblems.push(`${file} requires '${specifier}'`);
			}
		}
		if (/\bprocess\.env\b|\$env\b/.test(text))
			requireProblems.push(`${file} mentions process.env or $env`);
	}
	record(
		'node code: packed JavaScript requires only n8n-workflow, crypto and relative files',
		packedJs.length === 0 ? ['no .js files packed'] : requireProblems,
		`${packedJs.length} files`,
	);

	// 4. documentation URLs: the credential's and the codex files'.
	const credential: ICredentialType = new InvoicingAssetsApi();
	const nodes: Array<{ description: INodeTypeDescription; sourceFile: string }> = [
		{
			description: (new InvoicingAssets() as INodeType).description,
			sourceFile: join(REPOSITORY, 'nodes/InvoicingAssets/InvoicingAssets.node.ts'),
		},
		{
			description: (new InvoicingAssetsTrigger() as INodeType).description,
			sourceFile: join(REPOSITORY, 'nodes/InvoicingAssets/InvoicingAssetsTrigger.node.ts'),
		},
		{
			description: (new InvoicingAssetsPollingTrigger() as INodeType).description,
			sourceFile: join(REPOSITORY, 'nodes/InvoicingAssets/InvoicingAssetsPollingTrigger.node.ts'),
		},
	];
	record(
		'credential documentationUrl',
		documentationUrlProblems(
			'documentationUrl',
			credential.documentationUrl,
			repositoryUrl,
			anchors,
		),
		`${credential.documentationUrl}`,
	);

	const codexProblems: string[] = [];
	const codexSummary: string[] = [];
	for (const { description, sourceFile } of nodes) {
		const codexName = sourceFile.replace(/\.ts$/, '.json');
		const codexPath = relative(REPOSITORY, codexName);
		const packedCodex = join(packed, 'dist', relative(REPOSITORY, codexName));
		if (!existsSync(codexName)) {
			codexProblems.push(`${codexPath} is missing`);
			continue;
		}
		if (!existsSync(packedCodex)) codexProblems.push(`${codexPath} is not packed`);
		const codex = readJson<Codex>(codexName);
		if (codex.node !== `${packageJson.name}.${description.name}`) {
			codexProblems.push(
				`${codexPath}: "node" is ${codex.node}, not ${packageJson.name}.${description.name}`,
			);
		}
		const categories = codex.categories ?? [];
		if (categories.length === 0) codexProblems.push(`${codexPath}: no categories`);
		for (const category of categories) {
			if (!N8N_CATEGORIES.includes(category))
				codexProblems.push(`${codexPath}: unknown category "${category}"`);
		}
		const aliases = (codex.alias ?? []).map((alias) => alias.toLowerCase());
		const missing = REQUIRED_ALIASES.filter((alias) => !aliases.includes(alias));
		if (missing.length > 0) codexProblems.push(`${codexPath}: aliases lack ${missing.join(', ')}`);
		const primary = codex.resources?.primaryDocumentation ?? [];
		const credentialDocs = codex.resources?.credentialDocumentation ?? [];
		if (primary.length === 0) codexProblems.push(`${codexPath}: no primaryDocumentation`);
		if (credentialDocs.length === 0) codexProblems.push(`${codexPath}: no credentialDocumentation`);
		for (const { url } of primary) {
			codexProblems.push(
				...documentationUrlProblems(
					`${codexPath} primaryDocumentation`,
					url,
					repositoryUrl,
					anchors,
				),
			);
		}
		for (const { url } of credentialDocs) {
			codexProblems.push(
				...documentationUrlProblems(
					`${codexPath} credentialDocumentation`,
					url,
					repositoryUrl,
					anchors,
				),
			);
		}
		codexSummary.push(
			`${description.name}: ${categories.join(', ')}; ${aliases.length} aliases; docs #${primary.map(({ url }) => new URL(url).hash.slice(1)).join(', #')}`,
		);
	}
	record('codex files', codexProblems, codexSummary.join(' | '));

	// 5. themed icons, in the source and in the packed dist.
	const iconProblems: string[] = [];
	let iconCount = 0;
	const checkIcon = (owner: string, icon: unknown, sourceDir: string) => {
		const packedDir = join(packed, 'dist', relative(REPOSITORY, sourceDir));
		for (const [where, dir] of [
			['source', sourceDir],
			['packed', packedDir],
		] as const) {
			const files = iconFiles(icon, dir);
			if (files.problem) {
				iconProblems.push(`${owner}: ${files.problem}`);
				return;
			}
			iconProblems.push(...svgProblems(`${owner} light icon (${where})`, files.light));
			iconProblems.push(...svgProblems(`${owner} dark icon (${where})`, files.dark));
			iconCount += 2;
		}
	};
	for (const { description, sourceFile } of nodes)
		checkIcon(description.name, description.icon, dirname(sourceFile));
	checkIcon(credential.name, credential.icon, join(REPOSITORY, 'credentials'));
	record(
		'themed icons exist',
		iconProblems,
		`${iconCount} light/dark SVG files found (source and packed)`,
	);

	// 6. the documents: links, images, tables, quoted messages; nothing but the package in the tarball.
	const documents = documentationFiles(REPOSITORY);
	record(
		'documentation links',
		brokenLinks(REPOSITORY, documents, repositoryUrl),
		`${documents.reduce((sum, file) => sum + markdownLinks(file).length, 0)} links in ${documents.length} documents (${documents.map((file) => file.path).join(', ')}) reach their file and heading`,
	);

	const imageProblems: string[] = [];
	const shown = new Set<string>();
	for (const file of documents) {
		for (const link of markdownLinks(file).filter((candidate) => candidate.image)) {
			const target = resolveLink(link.target, file.path, repositoryUrl);
			if (!target.local) continue;
			shown.add(target.path);
			if (!existsSync(join(REPOSITORY, target.path))) {
				imageProblems.push(`${file.path}:${link.line} shows ${target.path}, which does not exist`);
			}
			if (file.path === 'README.md' && !/^https:\/\//.test(link.target)) {
				imageProblems.push(
					`README.md:${link.line} shows ${link.target} by a relative path, which npm's package page does not show: use https://raw.githubusercontent.com/<owner>/<repo>/main/${target.path}`,
				);
			}
		}
	}
	const present = filesUnder(join(REPOSITORY, 'docs/images'), (path) => path.endsWith('.png')).map(
		(file) => relative(REPOSITORY, file),
	);
	if (![...shown].some((path) => path.startsWith('docs/images/'))) {
		imageProblems.push('README.md and docs/ show no screenshot from docs/images');
	}
	for (const image of present) {
		if (!shown.has(image)) imageProblems.push(`${image} is shown in no document`);
	}
	record(
		'screenshots',
		imageProblems,
		`${present.length} images in docs/images, all shown; the README's by absolute URL`,
	);

	const readmeBytes = Buffer.byteLength(readme);
	record(
		'README size',
		readmeBytes > README_MAX_BYTES
			? [
					`README.md has ${readmeBytes} bytes, more than ${README_MAX_BYTES}: move details into docs/ and link them`,
				]
			: [],
		`${(readmeBytes / 1024).toFixed(1)} KiB (at most ${README_MAX_BYTES / 1024})`,
	);
	record(
		'documentation tables',
		wideTables(documents, 400, 200),
		'no table row over 400 characters, no cell over 200',
	);

	// The messages the troubleshooting quotes are those the code produces, and the README's
	// common ones each have their entry in docs/troubleshooting.md.
	const patterns = sourceMessagePatterns(sourceFiles);
	const troubleshooting = documents.find((file) => file.path === 'docs/troubleshooting.md');
	const everyMessage = troubleshooting ? quotedMessages(troubleshooting.text) : [];
	const common = quotedMessages(section(readme, 'Troubleshooting'));
	const quoteProblems = [
		...(troubleshooting ? [] : ['docs/troubleshooting.md is missing']),
		...(everyMessage.length === 0 ? ['docs/troubleshooting.md quotes no message'] : []),
		...(common.length === 0 ? ['no quoted message under README.md ## Troubleshooting'] : []),
		...[...new Set([...everyMessage, ...common])]
			.filter((quote) => !patterns.some((pattern) => pattern.test(quote)))
			.map((quote) => `"${quote}" is not a message of nodes/ or credentials/`),
		...common
			.filter((quote) => !everyMessage.includes(quote))
			.map((quote) => `README.md quotes "${quote}", which docs/troubleshooting.md does not`),
	];
	record(
		"troubleshooting quotes the code's messages",
		quoteProblems,
		`${everyMessage.length} messages in docs/troubleshooting.md, ${common.length} of them in the README, each produced by the code`,
	);

	record(
		'N8N_COMMUNITY_PACKAGES in the documents',
		communityPackagesProblems(documents, packageJson),
		`every value is a JSON list n8n reads, pinning ${packageJson.name}@${packageJson.version}`,
	);
	record(
		"the README's try-it commands run in .ci/run",
		readmeCommandProblems(readme, packageJson),
		'npm run setup as a step, npm start through the demo smoke check',
	);

	record(
		'exactly-once recipe: docs and example agree',
		exactlyOnceRecipeProblems(),
		'docs/repeated-deliveries.md gives the table, query, parameter and filter of new-invoice-exactly-once.json',
	);

	// 7. GitHub workflows: YAML that parses, real ${{ }} expressions, the steps the issue asks for.
	record(
		'GitHub workflows',
		workflowProblems(),
		'ci.yml and publish.yml parse; expressions and steps in place',
	);

	const allowed =
		/^(dist\/(nodes|credentials)\/|dist\/package\.json$|package\.json$|README\.md$|LICENSE\.md$|CHANGELOG\.md$)/;
	const stray = packedFiles.filter((file) => !allowed.test(file) || /\.png$/i.test(file));
	record(
		'lean package',
		stray.map((file) => `packed but not part of the package: ${file}`),
		`${packedFiles.length} files, ${(tarballBytes / 1024).toFixed(1)} kB packed, ${(unpackedBytes / 1024).toFixed(1)} kB unpacked; no docs/, no PNG`,
	);
}

main().catch((error: Error) => {
	process.stdout.write(`verify failed to run: ${error.stack ?? error.message}\n`);
	process.stdout.write('Checks: 0 passed, 1 failed, 1 total\n');
	process.exitCode = 1;
});
