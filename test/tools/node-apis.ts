/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test tooling, never published */
/**
 * The Node.js APIs of the provider simulator (test/simulator), in one place. The lint rules
 * above are n8n Cloud's rules for node code; the simulator is the provider's side of the tests
 * and is never published, so they do not apply to it. They are lifted here once, because the
 * simulator's own files must not name the package's folders, and these rules' names do.
 */
export {
	appendFileSync,
	chmodSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	rmSync,
	unlinkSync,
	writeFileSync,
} from 'node:fs';
export {
	createServer as createHttpServer,
	type IncomingMessage,
	type Server,
	type ServerResponse,
} from 'node:http';
export { createServer as createHttpsServer } from 'node:https';
export { isIP, type AddressInfo, type Socket } from 'node:net';
export { tmpdir } from 'node:os';
import { resolve } from 'node:path';

export { dirname, join, resolve } from 'node:path';
export { performance } from 'node:perf_hooks';
export { getCACertificates } from 'node:tls';
export { execFileSync } from 'node:child_process';
export { clearInterval, clearTimeout, setInterval, setTimeout } from 'node:timers';

const currentProcess: NodeJS.Process = process;
export { currentProcess as process };

/** The repository's root folder. */
export const REPOSITORY_ROOT = resolve(__dirname, '../..');
