/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// n8n-core writes its instance settings on first use; keep them out of the user's ~/.n8n. Under
// Jest the global setup made the folder (and its teardown removes it); a script that imports this
// file gets its own, removed when it exits.
if (!process.env.N8N_USER_FOLDER) {
	const folder = mkdtempSync(join(tmpdir(), 'invoicing-assets-n8n-'));
	process.env.N8N_USER_FOLDER = folder;
	process.once('exit', () => rmSync(folder, { recursive: true, force: true }));
}
// n8n logs every node error; the tests assert those errors themselves.
process.env.N8N_LOG_LEVEL ??= 'silent';
