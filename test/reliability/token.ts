/* eslint-disable @n8n/community-nodes/no-restricted-imports */
/**
 * Item 5: the token under stress, in the real n8n. Simulated hours with traffic every simulated
 * minute (concurrent runs of Webhook → Split Out → Invoice Get), token expiry, and at the halfway
 * mark a rotation to a new client secret: the simulator's key gets a new secret and the credential
 * is updated through n8n's public API with a partial PATCH (n8n keeps the cached token). The old
 * token keeps working until it expires, then the service refuses it and the node renews it with the
 * new secret. Every item is checked against the simulator's record; token exchanges are counted at
 * the simulator, with the simulated minute of each.
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';

import {
	GRANT_PATH,
	paths,
	readAccessToken,
	tokenRequestForm,
} from '../../nodes/InvoicingAssets/transport/contract';
import { waitFor } from '../n8n/executions';
import { startSimulator } from '../simulator';
import { count } from './report';
import { createCredential, createWorkflow, httpsAgent, post, type RunContext } from './support';
import { invoiceGetWorkflow } from './workflows';

const ITEM = '5 token';
const MINUTE = 60_000;

export async function tokenCheck(ctx: RunContext) {
	const { tokenMinutes, tokenItemsPerRun, tokenRunsPerMinute } = ctx.sizes;
	const sim = await startSimulator({ invoices: 200, assets: 20 });
	const n8n = await ctx.mainN8n();
	const agent = httpsAgent(tokenRunsPerMinute + 2);
	const simAgent = httpsAgent(2);
	try {
		const credential = await createCredential(n8n, sim, 'Token stress');
		const path = randomUUID();
		const workflowId = await createWorkflow(
			n8n,
			invoiceGetWorkflow(path, 'Token stress', credential, { node: 'ours' }),
		);
		const published = await n8n.api('POST', `/workflows/${workflowId}/publish`);
		if (published.status !== 200) throw new Error(`publish: ${published.status} ${published.text}`);
		const url = `${n8n.url}/webhook/${path}`;
		await waitFor(
			'the webhook',
			async () => (await post(agent, url, '{"items":[]}')).status !== 404,
			60_000,
			500,
		);

		// The log keeps whole seconds.
		const started = Math.floor(sim.clock.now().getTime() / 1000) * 1000;
		const minuteOf = (at: string) => Math.floor((Date.parse(at) - started) / MINUTE);
		const numbers = sim.data.invoices().map((invoice) => invoice.invoiceNumber);
		const rotationMinute = Math.floor(tokenMinutes / 2);
		let items = 0;
		let failed = 0;
		const probeMinutes: number[] = [];
		const failures: string[] = [];
		const probe = {
			oldToken: '',
			keptWorking: false,
			refusedAfterExpiry: false,
			oldSecretRefused: false,
		};
		const clientId = sim.defaultClient.clientId;
		const oldSecret = sim.defaultClient.clientSecret;

		const directToken = async (secret: string, minute: number) => {
			const answer = await post(
				simAgent,
				`${sim.identityUrl}${GRANT_PATH}`,
				new URLSearchParams({
					...tokenRequestForm(clientId, secret, sim.defaultClient.scope),
				}).toString(),
				{ 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
			);
			if (answer.status === 200) probeMinutes.push(minute);
			return {
				status: answer.status,
				token: answer.status === 200 ? readAccessToken(answer.text) : undefined,
			};
		};
		const directGet = async (token: string) =>
			(
				await post(
					simAgent,
					`${sim.serviceUrl}${paths.invoice(numbers[0])}`,
					undefined,
					{ authorization: `Bearer ${token}`, accept: 'application/json' },
					'GET',
				)
			).status;

		ctx.say(
			`  token: ${tokenMinutes} simulated minutes, ${tokenRunsPerMinute} runs of ${tokenItemsPerRun} items each per minute, rotation at minute ${rotationMinute}`,
		);
		for (let minute = 0; minute < tokenMinutes; minute++) {
			if (minute > 0) sim.clock.advance(MINUTE);
			if (minute === rotationMinute) {
				// A token issued under the old secret, to watch it outlive the rotation.
				probe.oldToken = (await directToken(oldSecret, minute)).token ?? '';
				const rotated = sim.updateClientSecret(clientId);
				const patched = await n8n.api('PATCH', `/credentials/${credential.id}`, {
					data: { clientSecret: rotated.clientSecret },
					isPartialData: true,
				});
				if (patched.status !== 200)
					throw new Error(`credential update: ${patched.status} ${patched.text}`);
				probe.oldSecretRefused = (await directToken(oldSecret, minute)).status === 401;
				probe.keptWorking = (await directGet(probe.oldToken)) === 200;
			}
			if (minute === rotationMinute + 60)
				probe.refusedAfterExpiry = (await directGet(probe.oldToken)) === 401;
			const runs = Array.from({ length: tokenRunsPerMinute }, (_, run) =>
				Array.from(
					{ length: tokenItemsPerRun },
					(_, item) => numbers[(minute * 7 + run * 31 + item) % numbers.length],
				),
			);
			await Promise.all(
				runs.map(async (list) => {
					items += list.length;
					const answer = await post(
						agent,
						url,
						JSON.stringify({ items: list.map((invoiceNumber) => ({ invoiceNumber })) }),
					);
					let records: unknown = [];
					try {
						records = JSON.parse(answer.text);
					} catch {
						records = [];
					}
					const right = Array.isArray(records)
						? records.filter((record, index) =>
								isDeepStrictEqual(record, sim.data.invoice(list[index])),
							).length
						: 0;
					if (answer.status !== 200 || right !== list.length) {
						failed += list.length - right;
						ctx.errorMessages.push(answer.text.slice(0, 2000));
						failures.push(`minute ${minute}: HTTP ${answer.status} ${answer.text.slice(0, 160)}`);
					}
				}),
			);
		}

		const exchanges = sim.log
			.entries({ route: 'token', status: 200 })
			.map((entry) => minuteOf(entry.at));
		for (const minute of probeMinutes) exchanges.splice(exchanges.indexOf(minute), 1);
		const refusals = sim.log.entries({ status: 401 }).filter((entry) => entry.route !== 'token');
		if (probe.refusedAfterExpiry) refusals.pop();
		const nodeExchanges = exchanges.length;
		const allowed = Math.ceil(tokenMinutes / 60) + 1;
		ctx.report.check(
			ITEM,
			`items failed over ${tokenMinutes} simulated minutes (${count(items)} items, ${tokenRunsPerMinute} concurrent runs a minute)`,
			failed,
			'0',
			failed === 0,
			failures.length ? failures.slice(0, 3).join(' | ') : undefined,
		);
		ctx.report.check(
			ITEM,
			'token exchanges by n8n (simulated minute of each)',
			`${nodeExchanges} (minutes ${exchanges.join(', ')})`,
			`≤ ${allowed} (one per 60 min + one for the rotation)`,
			nodeExchanges <= allowed && nodeExchanges >= Math.ceil(tokenMinutes / 60),
		);
		ctx.report.check(
			ITEM,
			`after the rotation at minute ${rotationMinute}: old secret refused / old token still accepted / old token refused after it expired`,
			`${probe.oldSecretRefused ? 'yes' : 'no'} / ${probe.keptWorking ? 'yes' : 'no'} / ${probe.refusedAfterExpiry ? 'yes' : 'no'}`,
			'yes / yes / yes',
			probe.oldSecretRefused && probe.keptWorking && probe.refusedAfterExpiry,
		);
		ctx.report.info(
			ITEM,
			'requests the service refused (401) for an expired token; concurrent runs meeting it share one renewal',
			`${refusals.length} (minutes ${refusals.map((entry) => minuteOf(entry.at)).join(', ')})`,
			'—',
			'the credential was updated with a partial PATCH, so n8n kept using the old token until the service refused it',
		);
	} finally {
		await agent.close();
		await simAgent.close();
		await sim.close();
	}
}
