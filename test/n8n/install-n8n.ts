/* eslint-disable @n8n/community-nodes/no-restricted-globals */
/**
 * `npm run install:n8n`: installs the pinned n8n into the cache folder when it is missing or no
 * longer loads (about 5 minutes, the first time only), else only checks it. `.ci/run` runs it as a
 * step of its own before the suites, so that no install ever runs inside a Jest hook's timeout.
 */
import { cacheRoot, ensureN8n, N8N_VERSION } from './install';

const started = Date.now();
try {
	const installation = ensureN8n();
	process.stdout.write(
		`n8n@${N8N_VERSION} ready in ${installation.home} (cache ${cacheRoot()}), ${Math.round((Date.now() - started) / 1000)} s\n`,
	);
} catch (error) {
	process.stderr.write(`${(error as Error).message}\n`);
	process.exitCode = 1;
}
