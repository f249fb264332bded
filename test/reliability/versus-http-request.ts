/* eslint-disable @n8n/community-nodes/no-restricted-imports */
/**
 * The action node against n8n's HTTP Request node with our credential (predefined credential
 * type), in the real n8n: the same Invoice Gets, same instance, same simulator, same run. Each
 * workflow is Webhook (answers with every item of the last node) → Split Out → the Get node, started
 * by one POST whose body holds the invoice numbers; its wall time is the POST's. The two take turns,
 * after a warm-up run each (which also fetches the shared credential's token).
 */
import { isDeepStrictEqual } from 'node:util';

import { DEFAULT_CONCURRENCY } from '../../nodes/InvoicingAssets/actions/common.descriptions';
import { listExecutions, waitFor } from '../n8n/executions';
import type { N8nInstance } from '../n8n/instance';
import { speedFigure } from './deliveries';
import { count, median, ratio } from './report';
import {
	createCredential,
	publishWebhookWorkflow,
	httpsAgent,
	post,
	startTrackedSimulator,
	type CredentialRef,
	type RunContext,
} from './support';
import { GET_NAME, invoiceGetWorkflow } from './workflows';

const ITEM = '3 vs HTTP Request';

interface Contender {
	label: string;
	workflowId: string;
	url: string;
	wallMs: number[];
	nodeMs: number[];
	wrong: number;
}

export async function versusHttpRequestCheck(ctx: RunContext) {
	const items = ctx.sizes.httpRequestItems;
	const sim = await startTrackedSimulator({ invoices: Math.max(items, 1050), assets: 20 });
	const n8n = await ctx.mainN8n();
	const agent = httpsAgent(4);
	try {
		const credential = await createCredential(n8n, sim, 'Versus HTTP Request');
		const ours = await contender(n8n, credential, `our node (concurrency ${DEFAULT_CONCURRENCY})`, {
			node: 'ours',
		});
		const http = await contender(n8n, credential, 'HTTP Request node', {
			node: 'httpRequest',
			baseUrl: sim.serviceUrl,
		});
		const numbers = sim.data
			.invoices()
			.slice(0, items)
			.map((invoice) => invoice.invoiceNumber);
		const runOnce = async (who: Contender, list: string[], record: boolean): Promise<number> => {
			const before = sim.log.count('invoices.get');
			const answer = await post(
				agent,
				who.url,
				JSON.stringify({ items: list.map((invoiceNumber) => ({ invoiceNumber })) }),
			);
			const requests = sim.log.count('invoices.get') - before;
			let body: unknown;
			try {
				body = JSON.parse(answer.text);
			} catch {
				body = answer.text;
			}
			const records = Array.isArray(body) ? body : [];
			const right = records.filter((record, index) =>
				isDeepStrictEqual(record, sim.data.invoice(list[index])),
			).length;
			if (answer.status !== 200 || right !== list.length || requests !== list.length) {
				ctx.errorMessages.push(answer.text.slice(0, 2000));
				if (record) who.wrong += list.length - right;
				ctx.say(
					`  versus: ${who.label}: HTTP ${answer.status}, ${right} / ${list.length} right, ${requests} requests`,
				);
			}
			if (record) who.wallMs.push(answer.ms);
			return answer.status;
		};
		ctx.say(`  versus: warm-up`);
		for (const who of [ours, http]) {
			// Published in the default mode, the webhook answers 404 until it is registered.
			await waitFor(
				`${who.label} published`,
				async () => (await runOnce(who, numbers.slice(0, 20), false)) === 200,
				60_000,
				500,
			);
		}
		for (let repeat = 0; repeat < ctx.sizes.httpRequestRepeats; repeat++) {
			const order = repeat % 2 === 0 ? [ours, http] : [http, ours];
			for (const who of order) {
				ctx.say(`  versus: ${who.label}, ${count(items)} items, run ${repeat + 1}`);
				await runOnce(who, numbers, true);
			}
		}
		for (const who of [ours, http]) {
			const executions = await listExecutions(n8n, who.workflowId, true);
			who.nodeMs = executions
				.slice(0, ctx.sizes.httpRequestRepeats)
				.map((execution) =>
					Number(execution.data?.resultData.runData[GET_NAME]?.[0]?.executionTime ?? Number.NaN),
				);
		}

		const wallRatio = median(ours.wallMs) / median(http.wallMs);
		const nodeRatio = median(ours.nodeMs) / median(http.nodeMs);
		ctx.report.check(
			ITEM,
			`Invoice Gets right in both workflows (${count(items)} items × ${ctx.sizes.httpRequestRepeats} runs each)`,
			`${count(ours.wrong + http.wrong)} wrong`,
			'0 wrong',
			ours.wrong + http.wrong === 0,
		);
		for (const who of [ours, http]) {
			ctx.report.info(
				ITEM,
				`wall time, ${who.label} (median of ${who.wallMs.length}; the node alone)`,
				`${(median(who.wallMs) / 1000).toFixed(2)} s (${(median(who.nodeMs) / 1000).toFixed(2)} s)`,
			);
		}
		speedFigure(ctx, ITEM, 'wall-time ratio ours / HTTP Request node', wallRatio, 1.0);
		ctx.report.info(ITEM, 'the Get node alone, ratio ours / HTTP Request node', ratio(nodeRatio));
	} finally {
		await agent.close();
		await sim.close();
	}
}

async function contender(
	n8n: N8nInstance,
	credential: CredentialRef,
	label: string,
	via: Parameters<typeof invoiceGetWorkflow>[3],
): Promise<Contender> {
	const { workflowId, url } = await publishWebhookWorkflow(n8n, (path) =>
		invoiceGetWorkflow(path, `Versus: ${label}`, credential, via),
	);
	return { label, workflowId, url, wallMs: [], nodeMs: [], wrong: 0 };
}
