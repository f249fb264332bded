/* eslint-disable @n8n/community-nodes/no-restricted-imports */
/**
 * Item 3, Return All (issue 31): the action node's Invoice Get Many with Return All against what a
 * user without this package would build, in the same real n8n 2.41.1: n8n's HTTP Request node with
 * our credential (predefined credential type), paging by `page` and `pageSize` until a short page
 * (its own pagination options), then Split Out into one item per invoice (the setup README.md gives,
 * workflows.ts httpRequestListParameters). The same simulator with service latency added to every
 * token and list request, the same run; the two take turns, after a warm-up run each (which also
 * fetches the shared credential's token). Each workflow is Webhook (answers with every item of the
 * last node) → the list; its wall time is the POST's, and every invoice must come back right, in order.
 * Goal: the node at least 3 times as fast (judged at full size).
 */
import { isDeepStrictEqual } from 'node:util';

import { getExecution, listExecutions, waitFor } from '../n8n/executions';
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
import { invoiceReturnAllWorkflow, WEBHOOK_NAME } from './workflows';

const ITEM = '3 vs HTTP Request';

/** The node at least this many times as fast as the HTTP Request node over the same list. */
export const RETURN_ALL_GOAL = 3;

interface Contender {
	label: string;
	workflowId: string;
	url: string;
	wallMs: number[];
	listRequests: number[];
	/** n8n's own time for the nodes after the Webhook node (execution data), per recorded run. */
	nodesMs: number[];
	wrong: number;
}

export async function returnAllCheck(ctx: RunContext) {
	const invoices = ctx.sizes.returnAllInvoices;
	const latencyMs = ctx.sizes.returnAllLatencyMs;
	const sim = await startTrackedSimulator({ invoices, assets: 20 });
	const n8n = await ctx.mainN8n();
	const agent = httpsAgent(2);
	try {
		for (const route of ['token', 'invoices.list'] as const) {
			if (latencyMs > 0) sim.faults.add({ route, latencyMs });
		}
		const credential = await createCredential(n8n, sim, 'Return All versus HTTP Request');
		const ours = await contender(n8n, credential, 'our node, Return All', { node: 'ours' });
		const http = await contender(n8n, credential, 'HTTP Request node → Split Out', {
			node: 'httpRequest',
			baseUrl: sim.serviceUrl,
		});
		const expected = sim.data.invoices();
		const readAll = async (who: Contender) => {
			const before = sim.log.count('invoices.list');
			const answer = await post(agent, who.url, '{}');
			const requests = sim.log.count('invoices.list') - before;
			let body: unknown;
			try {
				body = JSON.parse(answer.text);
			} catch {
				body = answer.text;
			}
			const records = Array.isArray(body) ? body : [];
			const right = records.filter((one, index) => isDeepStrictEqual(one, expected[index])).length;
			return { answer, requests, records, right };
		};
		const runOnce = async (who: Contender, record: boolean): Promise<number> => {
			const { answer, requests, records, right } = await readAll(who);
			const allRight =
				answer.status === 200 && right === expected.length && records.length === expected.length;
			// (A warm-up's 404: not published yet.)
			if (!allRight && (record || answer.status !== 404)) {
				ctx.errorMessages.push(answer.text.slice(0, 2000));
				ctx.say(
					`  return all: ${who.label}: HTTP ${answer.status}, ${right} of ${expected.length} right, ${records.length} items, ${requests} list requests`,
				);
			}
			if (record) {
				if (!allRight) who.wrong += Math.max(expected.length - right, records.length - right, 1);
				who.wallMs.push(answer.ms);
				who.listRequests.push(requests);
			}
			return answer.status;
		};
		ctx.say(`  return all: warm-up (${count(invoices)} invoices, ${latencyMs} ms service latency)`);
		for (const who of [ours, http]) {
			// Published in the default mode, the webhook answers 404 until it is registered.
			await waitFor(
				`${who.label} published`,
				async () => (await runOnce(who, false)) === 200,
				120_000,
				500,
			);
		}
		for (let repeat = 0; repeat < ctx.sizes.returnAllRepeats; repeat++) {
			const order = repeat % 2 === 0 ? [ours, http] : [http, ours];
			for (const who of order) {
				ctx.say(`  return all: ${who.label}, ${count(invoices)} invoices, run ${repeat + 1}`);
				await runOnce(who, true);
			}
		}

		// Where the time goes: n8n's own time for the list nodes, without the webhook's answer.
		for (const who of [ours, http]) {
			const executions = (await listExecutions(n8n, who.workflowId)).slice(
				0,
				ctx.sizes.returnAllRepeats,
			);
			for (const { id } of executions) {
				const runData = (await getExecution(n8n, id)).data?.resultData.runData ?? {};
				who.nodesMs.push(
					Object.entries(runData)
						.filter(([name]) => name !== WEBHOOK_NAME)
						.reduce((sum, [, runs]) => sum + Number(runs[0]?.executionTime ?? Number.NaN), 0),
				);
			}
		}
		// Where the contract leaves room (docs/http-request-node.md says what each does): a service
		// that does not count (totalItems null), and one whose page limit is below the 100 asked for.
		const under = async (what: string, set: () => void, expectation: Record<string, string>) => {
			set();
			try {
				for (const who of [ours, http]) {
					const { answer, requests, records, right } = await readAll(who);
					if (answer.status !== 200) ctx.errorMessages.push(answer.text.slice(0, 2000));
					const seen =
						answer.status !== 200
							? 'the workflow failed'
							: right === expected.length && records.length === expected.length
								? 'every invoice'
								: `${count(records.length)} of ${count(expected.length)} invoices, no error`;
					ctx.report.check(
						ITEM,
						`Return All under ${what}: ${who.label} (list requests)`,
						`${seen} (${requests})`,
						expectation[who.label],
						seen === expectation[who.label],
					);
				}
			} finally {
				sim.setListShape({ totalItems: 'counted' });
				sim.setListPagingDeviation(undefined);
			}
		};
		await under(
			'totalItems null (a service that does not count)',
			() => sim.setListShape({ totalItems: 'null' }),
			{
				[ours.label]: 'every invoice',
				[http.label]: 'every invoice',
			},
		);
		await under(
			'a page limit of 50 (pages shorter than the 100 asked for; a contract deviation)',
			() => sim.setListPagingDeviation({ mode: 'max-page-size', maxPageSize: 50 }),
			{
				[ours.label]: 'the workflow failed',
				[http.label]: `${count(50)} of ${count(expected.length)} invoices, no error`,
			},
		);

		ctx.report.check(
			ITEM,
			`Return All: every invoice right and in order in both workflows (${count(invoices)} invoices × ${ctx.sizes.returnAllRepeats} runs each, ${latencyMs} ms service latency)`,
			`${count(ours.wrong + http.wrong)} wrong`,
			'0 wrong',
			ours.wrong + http.wrong === 0,
		);
		for (const who of [ours, http]) {
			ctx.report.info(
				ITEM,
				`Return All wall time, ${who.label} (median of ${who.wallMs.length}; its nodes alone in n8n's execution data; list requests)`,
				`${(median(who.wallMs) / 1000).toFixed(2)} s (${(median(who.nodesMs) / 1000).toFixed(2)} s; ${who.listRequests.join(', ')})`,
			);
		}
		const speedUp = median(http.wallMs) / median(ours.wallMs);
		speedFigure(
			ctx,
			ITEM,
			`Return All: how many times as fast, HTTP Request node wall time / ours`,
			speedUp,
			RETURN_ALL_GOAL,
			'atLeast',
		);
		ctx.report.info(
			ITEM,
			'Return All: the list nodes alone, HTTP Request node → Split Out / ours',
			ratio(median(http.nodesMs) / median(ours.nodesMs)),
		);
		ctx.say(
			`  return all: ours ${(median(ours.wallMs) / 1000).toFixed(2)} s, HTTP Request node ${(median(http.wallMs) / 1000).toFixed(2)} s: ${ratio(speedUp)} times as fast`,
		);
	} finally {
		await agent.close();
		await sim.close();
	}
}

async function contender(
	n8n: N8nInstance,
	credential: CredentialRef,
	label: string,
	via: Parameters<typeof invoiceReturnAllWorkflow>[3],
): Promise<Contender> {
	const { workflowId, url } = await publishWebhookWorkflow(n8n, (path) =>
		invoiceReturnAllWorkflow(path, `Return All: ${label}`, credential, via),
	);
	return {
		label,
		workflowId,
		url,
		wallMs: [],
		listRequests: [],
		nodesMs: [],
		wrong: 0,
	};
}
