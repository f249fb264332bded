/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/**
 * With INVOICING_N8N_ARTIFACTS_DIR set, an N8nInstance keeps what it wrote before its folder is
 * removed (see N8nInstance.dispose): its workflows and executions (with data) as the public API
 * exports them, its log and its database. The secret-hygiene scan (test/reliability) reads them.
 * Unset, nothing is kept.
 *
 * An export that does not finish leaves EXPORT_FAILED_FILE in the folder, saying why, and no
 * partial workflows.json / executions.json: the scan fails on it rather than reading an empty file.
 */
import { copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { N8nInstance } from './instance';

export const ARTIFACTS_DIR_ENV = 'INVOICING_N8N_ARTIFACTS_DIR';

/** Left in an instance's artifacts folder when its export through the public API failed. */
export const EXPORT_FAILED_FILE = 'export-failed.txt';

const EXPORTS = [
	['workflows.json', '/workflows?limit=250'],
	['executions.json', '/executions?includeData=true&limit=250'],
] as const;

/** Every record of one public-API list, page by page; throws when a page is not answered 200. */
async function exportList(instance: N8nInstance, path: string): Promise<unknown[]> {
	const records: unknown[] = [];
	let cursor: string | undefined;
	do {
		const page = `${path}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
		const answer = await instance.api<{ data: unknown[]; nextCursor?: string | null }>('GET', page);
		if (answer.status !== 200 || !Array.isArray(answer.body?.data)) {
			throw new Error(`GET /api/v1${page} answered ${answer.status}`);
		}
		records.push(...answer.body.data);
		cursor = answer.body.nextCursor ?? undefined;
	} while (cursor);
	return records;
}

/**
 * Exports workflows and executions through the public API while n8n runs; returns the folder.
 * Workers and webhook processes serve no public API: their folder gets the log only.
 */
export async function exportArtifacts(
	instance: N8nInstance,
	name: string,
): Promise<string | undefined> {
	const root = process.env[ARTIFACTS_DIR_ENV];
	if (!root || !instance.port) return undefined;
	const folder = join(root, `${name}-${instance.port}-${Date.now()}`);
	mkdirSync(folder, { recursive: true });
	if (instance.command !== 'start') return folder;
	const failed = join(folder, EXPORT_FAILED_FILE);
	// Written first and removed only when every file is complete: an export cut short leaves it.
	writeFileSync(failed, 'the export did not finish\n');
	try {
		if (instance.pid === undefined) throw new Error('n8n was not running when it was disposed');
		const ready = await instance.http('GET', '/healthz/readiness');
		if (ready.status !== 200) throw new Error(`/healthz/readiness answered ${ready.status}`);
		const lists = [];
		for (const [file, path] of EXPORTS)
			lists.push([file, await exportList(instance, path)] as const);
		for (const [file, records] of lists) writeFileSync(join(folder, file), JSON.stringify(records));
		rmSync(failed);
	} catch (error) {
		writeFileSync(failed, `${(error as Error).message ?? String(error)}\n`);
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
