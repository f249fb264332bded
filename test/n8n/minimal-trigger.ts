/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/* eslint-disable @n8n/community-nodes/no-dangerous-functions -- test tooling: packs a test package */
/**
 * A second community package, for the test tree only: the minimal trigger of
 * test/n8n/minimal-trigger/MinimalTrigger.node.ts, transpiled, packed with `npm pack` and unpacked
 * where n8n looks for community packages, beside ours (test/n8n/package.ts). It gives the
 * reliability run the delivery-latency floor of any community trigger in the same n8n (issue 31).
 * Never published: it lives under test/, and the package's `files` is `["dist"]`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import ts from 'typescript';

export const MINIMAL_PACKAGE_NAME = 'n8n-nodes-minimal-trigger-test';
/** The node type a workflow names. */
export const MINIMAL_TRIGGER_TYPE = `${MINIMAL_PACKAGE_NAME}.minimalTrigger`;

const SOURCE = join(__dirname, 'minimal-trigger', 'MinimalTrigger.node.ts');

let packed: string | undefined;

/** Transpiles and packs the minimal trigger once per process; returns the tarball's path. */
export function packMinimalTrigger(): string {
	if (packed) return packed;
	const folder = mkdtempSync(join(tmpdir(), 'minimal-trigger-pack-'));
	process.once('exit', () => rmSync(folder, { recursive: true, force: true }));
	const source = join(folder, 'package');
	mkdirSync(join(source, 'dist'), { recursive: true });
	const output = ts.transpileModule(readFileSync(SOURCE, 'utf8'), {
		compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
		fileName: 'MinimalTrigger.node.ts',
		reportDiagnostics: true,
	});
	if (output.diagnostics?.length) {
		throw new Error(
			`minimal trigger: ${output.diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('; ')}`,
		);
	}
	writeFileSync(join(source, 'dist', 'MinimalTrigger.node.js'), output.outputText);
	writeFileSync(
		join(source, 'package.json'),
		JSON.stringify(
			{
				name: MINIMAL_PACKAGE_NAME,
				version: '0.0.0',
				description: 'Test only: the thinnest community trigger, for latency comparisons',
				license: 'MIT',
				private: true,
				keywords: ['n8n-community-node-package'],
				files: ['dist'],
				n8n: { n8nNodesApiVersion: 1, nodes: ['dist/MinimalTrigger.node.js'] },
				peerDependencies: { 'n8n-workflow': '*' },
			},
			null,
			'\t',
		),
	);
	const tarball = execFileSync(
		'npm',
		['pack', '--silent', '--ignore-scripts', '--pack-destination', folder],
		{
			cwd: source,
			encoding: 'utf8',
			stdio: ['ignore', 'pipe', 'inherit'],
			env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` },
		},
	)
		.trim()
		.split('\n')
		.pop();
	packed = join(folder, tarball ?? '');
	return packed;
}

/** Installs the minimal trigger's package in `<userFolder>/.n8n/nodes/node_modules/`, as ours is. */
export function installMinimalTrigger(userFolder: string): string {
	const target = join(userFolder, '.n8n/nodes/node_modules', MINIMAL_PACKAGE_NAME);
	mkdirSync(target, { recursive: true });
	execFileSync('tar', ['-xzf', packMinimalTrigger(), '-C', target, '--strip-components=1']);
	return target;
}
