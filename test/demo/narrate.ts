/* eslint-disable @n8n/community-nodes/no-restricted-globals */
/**
 * The demo's narration: one terminal line per ended execution of the example workflow, read from
 * n8n's public API. The line says the execution's number, the invoice, the assets fetched and the
 * outcome. The assets are read from the execution's data, whichever form the example takes: the
 * four-node form (Managed Asset Get outputs one asset record per item) or Invoice Get with Include
 * Billed Assets (the invoice item carries `assets: [...]`, `null` for an asset that is gone).
 */
import { getExecution, hasEnded, type Execution } from '../n8n/executions';
import type { N8nInstance } from '../n8n/instance';

export interface Narration {
	executionId: string;
	invoiceNumber?: string;
	assetIds: string[];
	missingAssets: number;
	error?: string;
	errorNode?: string;
}

type Json = Record<string, unknown>;

interface ExecutionWithError extends Execution {
	data?: Execution['data'] & { resultData: { lastNodeExecuted?: string } };
}

function isObject(value: unknown): value is Json {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Every item every node output in the execution, in the order n8n ran the nodes. */
function outputItems(execution: Execution): Json[] {
	const items: Json[] = [];
	for (const runs of Object.values(execution.data?.resultData.runData ?? {})) {
		for (const run of runs) {
			for (const output of run.data?.main ?? []) {
				for (const item of output ?? []) if (isObject(item?.json)) items.push(item.json);
			}
		}
	}
	return items;
}

function invoiceNumberOf(items: Json[]): string | undefined {
	for (const json of items) {
		// The trigger's event: { eventType, data: { invoiceNumber } }.
		if (isObject(json.data) && typeof json.data.invoiceNumber === 'string') {
			return json.data.invoiceNumber;
		}
	}
	const invoice = items.find((json) => typeof json.invoiceNumber === 'string');
	return invoice?.invoiceNumber as string | undefined;
}

/** An asset record: it has an assetId and is not an invoice (whose lines also name assets). */
function isAssetRecord(json: unknown): json is Json & { assetId: string } {
	return isObject(json) && typeof json.assetId === 'string' && json.invoiceNumber === undefined;
}

export function narrate(execution: Execution): Narration {
	const items = outputItems(execution);
	const assetIds: string[] = [];
	let missingAssets = 0;
	const fetched = (assetId: string) => {
		if (!assetIds.includes(assetId)) assetIds.push(assetId);
	};
	for (const json of items) {
		if (isAssetRecord(json)) fetched(json.assetId);
		if (!Array.isArray(json.assets)) continue;
		for (const asset of json.assets as unknown[]) {
			if (isAssetRecord(asset)) fetched(asset.assetId);
			else missingAssets++;
		}
	}
	const { resultData } = (execution as ExecutionWithError).data ?? {};
	const failedRun = Object.entries(resultData?.runData ?? {}).find(([, runs]) =>
		runs.some((run) => run.error),
	);
	const error = resultData?.error ?? failedRun?.[1].find((run) => run.error)?.error ?? undefined;
	const failed = execution.status !== 'success' || error !== undefined;
	return {
		executionId: execution.id,
		invoiceNumber: invoiceNumberOf(items),
		assetIds,
		missingAssets,
		error: failed ? (error?.message ?? `the execution ended as "${execution.status}"`) : undefined,
		errorNode: failed ? (failedRun?.[0] ?? resultData?.lastNodeExecuted) : undefined,
	};
}

/** E.g. `execution 12  invoice INV-2026-000123  2 assets fetched (AST-000017, AST-000042)  success`. */
export function narrationLine(narration: Narration): string {
	const { assetIds, missingAssets } = narration;
	const assets =
		`${assetIds.length} asset${assetIds.length === 1 ? '' : 's'} fetched` +
		(assetIds.length > 0 ? ` (${assetIds.join(', ')})` : '') +
		(missingAssets > 0 ? `, ${missingAssets} not found` : '');
	const outcome =
		narration.error === undefined
			? 'success'
			: `error: ${narration.error}${narration.errorNode ? ` (in "${narration.errorNode}")` : ''}`;
	return `execution ${narration.executionId}  invoice ${narration.invoiceNumber ?? '(none)'}  ${assets}  ${outcome}`;
}

/**
 * Prints a line for each execution of `workflowId` once it has ended, oldest first, polling n8n's
 * public API every `intervalMs`. Returns a function that stops it (a poll under way ends quietly).
 */
export function narrateExecutions(
	n8n: N8nInstance,
	workflowId: string,
	print: (line: string) => void,
	intervalMs = 1000,
): () => void {
	const told = new Set<string>();
	let stopped = false;
	let timer: NodeJS.Timeout | undefined;
	let lastProblem = '';
	const poll = async () => {
		try {
			const answer = await n8n.api<{ data: Execution[] }>(
				'GET',
				`/executions?workflowId=${workflowId}&limit=50`,
			);
			if (answer.status !== 200) throw new Error(`HTTP ${answer.status}`);
			const ended = answer.body.data
				.filter((execution) => hasEnded(execution) && !told.has(execution.id))
				.sort((a, b) => Number(a.id) - Number(b.id));
			for (const entry of ended) {
				const execution = await getExecution(n8n, entry.id);
				if (stopped) return;
				told.add(entry.id);
				print(`${new Date().toISOString()}  ${narrationLine(narrate(execution))}`);
			}
			lastProblem = '';
		} catch (error) {
			const problem = (error as Error).message;
			// Once per kind of trouble, not every second; nothing while the demo stops n8n.
			if (!stopped && problem !== lastProblem) print(`(could not read the executions: ${problem})`);
			lastProblem = problem;
		} finally {
			if (!stopped) timer = setTimeout(() => void poll(), intervalMs);
		}
	};
	void poll();
	return () => {
		stopped = true;
		clearTimeout(timer);
	};
}
