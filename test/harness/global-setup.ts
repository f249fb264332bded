/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where n8n-core keeps its instance settings during a Jest run; global-teardown removes it. */
export const OWN_USER_FOLDER_ENV = 'INVOICING_TEST_OWN_N8N_USER_FOLDER';

// One folder for the whole run, made before the workers start so that they inherit it.
export default function globalSetup() {
	if (process.env.N8N_USER_FOLDER) return;
	process.env.N8N_USER_FOLDER = mkdtempSync(join(tmpdir(), 'invoicing-assets-n8n-'));
	process.env[OWN_USER_FOLDER_ENV] = process.env.N8N_USER_FOLDER;
}
