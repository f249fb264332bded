/* eslint-disable @n8n/community-nodes/no-restricted-globals */
/**
 * `npm run install:n8n [-- <version>]`: installs an n8n release of the matrix (today's pin unless
 * a version is given) into the cache folder when it is missing or no longer loads (about 5
 * minutes, the first time only), else only checks it. `.ci/run` runs it as a step of its own
 * before the suites, so that no install ever runs inside a Jest hook's timeout.
 */
import { cacheRoot, CURRENT_N8N, ensureN8n, N8N_RELEASES } from './install';

const wanted = process.argv[2];
const release = wanted
	? N8N_RELEASES.find((candidate) => candidate.version === wanted)
	: CURRENT_N8N;
const started = Date.now();
try {
	if (!release) {
		throw new Error(
			`n8n ${wanted} is not in the matrix (${N8N_RELEASES.map((r) => r.version).join(', ')})`,
		);
	}
	const installation = ensureN8n(release);
	process.stdout.write(
		`n8n@${release.version} on Node ${release.nodeMajor} ready in ${installation.home} (cache ${cacheRoot()}), ${Math.round((Date.now() - started) / 1000)} s\n`,
	);
} catch (error) {
	process.stderr.write(`${(error as Error).message}\n`);
	process.exitCode = 1;
}
