/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/**
 * Renders the compatibility table of docs/compatibility.md from the latest results of the
 * real-n8n scenario (`<cache>/matrix-results/<version>.json`, written by test/e2e/matrix), between
 * the `matrix:start` / `matrix:end` markers. Run by `npm run test:matrix`.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { cacheRoot, N8N_RELEASES, type N8nRelease } from '../n8n/install';

interface MatrixResult {
	release: N8nRelease;
	finishedAt: string;
	seconds: number;
	results: Array<{ step: string; passed: boolean }>;
}

const document = join(__dirname, '../../docs/compatibility.md');
const start = '<!-- matrix:start -->';
const end = '<!-- matrix:end -->';

const steps = new Map<string, number>();
const rows = N8N_RELEASES.map((release) => {
	const file = join(cacheRoot(), 'matrix-results', `${release.version}.json`);
	if (!existsSync(file)) return `| ${release.version} | ${release.nodeMajor} | not run | — |`;
	const run = JSON.parse(readFileSync(file, 'utf8')) as MatrixResult;
	const passed = run.results.filter((result) => result.passed).length;
	const failedSteps = run.results.filter((result) => !result.passed).map((result) => result.step);
	const outcome =
		failedSteps.length === 0 && passed > 0
			? `**passed** (${passed}/${run.results.length} steps, ${run.finishedAt.slice(0, 10)})`
			: `**failed**: ${failedSteps.join('; ')} (${run.finishedAt.slice(0, 10)})`;
	steps.set(run.results.map((result) => result.step).join('\n'), run.results.length);
	return `| ${release.version} | ${release.nodeMajor} | reduced real-n8n scenario (${run.results.length} steps) | ${outcome} |`;
});
// The steps go below the table, once (a cell listing them would be too wide to read).
const stepLists = [...steps.keys()];
const table = [
	'| n8n | Node | what was run | result |',
	'|---|---|---|---|',
	...rows,
	...(stepLists.length === 1
		? [
				'',
				'The steps of the scenario:',
				'',
				...stepLists[0].split('\n').map((step, index) => `${index + 1}. ${step}`),
			]
		: []),
].join('\n');

const text = readFileSync(document, 'utf8');
const from = text.indexOf(start);
const to = text.indexOf(end);
if (from < 0 || to < from) throw new Error(`${document} has no ${start} … ${end} section`);
writeFileSync(document, `${text.slice(0, from + start.length)}\n${table}\n${text.slice(to)}`);
process.stdout.write(`${table}\n`);
