/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
import { rmSync } from 'node:fs';

import { OWN_USER_FOLDER_ENV } from './global-setup';

export default function globalTeardown() {
	const folder = process.env[OWN_USER_FOLDER_ENV];
	if (folder) rmSync(folder, { recursive: true, force: true });
}
