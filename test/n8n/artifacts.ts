/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/**
 * With INVOICING_N8N_ARTIFACTS_DIR set, an N8nInstance keeps what it wrote before its folder is
 * removed (see N8nInstance.dispose): its workflows and executions (with data) as the public API
 * exports them, its log and its database. The secret-hygiene scan (test/reliability) reads them.
 * Unset, nothing is kept.
 */
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { N8nInstance } from './instance';

export const ARTIFACTS_DIR_ENV = 'INVOICING_N8N_ARTIFACTS_DIR';

/** Exports workflows and executions through the public API while n8n runs; returns the folder. */
export async function exportArtifacts(
	instance: N8nInstance,
	name: string,
): Promise<string | undefined> {
	const root = process.env[ARTIFACTS_DIR_ENV];
	if (!root || !instance.port) return undefined;
	const folder = join(root, `${name}-${instance.port}-${Date.now()}`);
	mkdirSync(folder, { recursive: true });
	const ready = await instance.http('GET', '/healthz/readiness').catch(() => undefined);
	if (ready?.status !== 200) return folder;
	for (const [file, path] of [
		['workflows.json', '/workflows?limit=250'],
		['executions.json', '/executions?includeData=true&limit=250'],
	]) {
		const pages: unknown[] = [];
		let cursor: string | undefined;
		do {
			const answer = await instance
				.api<{
					data: unknown[];
					nextCursor?: string | null;
				}>('GET', `${path}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
				.catch(() => undefined);
			if (answer?.status !== 200) break;
			pages.push(...answer.body.data);
			cursor = answer.body.nextCursor ?? undefined;
		} while (cursor);
		writeFileSync(join(folder, file), JSON.stringify(pages));
	}
	return folder;
}

/** Copies the log and the database once n8n has stopped. */
export function copyArtifacts(instance: N8nInstance, folder: string | undefined) {
	if (!folder) return;
	const files: Array<[string, string]> = [
		[instance.logPath, 'n8n.log'],
		[join(instance.userFolder, '.n8n/database.sqlite'), 'database.sqlite'],
		[join(instance.userFolder, '.n8n/database.sqlite-wal'), 'database.sqlite-wal'],
	];
	for (const [from, to] of files) {
		if (existsSync(from)) copyFileSync(from, join(folder, to));
	}
}
