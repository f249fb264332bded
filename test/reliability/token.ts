/* eslint-disable @n8n/community-nodes/no-restricted-imports */
/**
 * The token under stress, in the real n8n. Simulated hours with traffic every simulated
 * minute (concurrent runs of Webhook → Split Out → Invoice Get), token expiry, and at the halfway
 * mark a rotation to a new client secret: the simulator's key gets a new secret and the credential
 * is updated through n8n's public API with a partial PATCH (n8n keeps the cached token). The old
 * token keeps working until it expires, then the service refuses it and the node renews it with the
 * new secret. Every item is checked against the simulator's record. n8n's token exchanges and its
 * requests around the rotation are read from the simulator's request log; the probe's own calls
 * (direct token requests and GETs, made while n8n is idle between two minutes of traffic) are told
 * apart by the log's sequence numbers and the token counter, never by clock arithmetic.
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';

import {
	GRANT_PATH,
	paths,
	tokenRequestForm,
} from '../../nodes/InvoicingAssets/transport/contract';
import { ACCESS_TOKEN_LIFETIME_SECONDS } from '../simulator/contract';
import { readAccessToken } from '../../nodes/InvoicingAssets/transport/responses';
import { waitFor } from '../n8n/executions';
import type { RequestLogEntry } from '../simulator';
import { count } from './report';
import {
	createCredential,
	createWorkflow,
	httpsAgent,
	post,
	printable,
	startTrackedSimulator,
	type RunContext,
} from './support';
import { invoiceGetWorkflow } from './workflows';

const ITEM = '5 token';
const MINUTE = 60_000;
const TOKEN_LIFETIME_MS = ACCESS_TOKEN_LIFETIME_SECONDS * 1000;

export async function tokenCheck(ctx: RunContext) {
	const { tokenMinutes, tokenItemsPerRun, tokenRunsPerMinute } = ctx.sizes;
	const sim = await startTrackedSimulator({ invoices: 200, assets: 20 });
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

		const numbers = sim.data.invoices().map((invoice) => invoice.invoiceNumber);
		const rotationMinute = Math.floor(tokenMinutes / 2);
		let items = 0;
		let failed = 0;
		const failures: string[] = [];
		const probe = {
			oldToken: '',
			keptWorking: false,
			refusedAfterExpiry: false,
			oldSecretRefused: false,
		};
		const clientId = sim.defaultClient.clientId;
		const oldSecret = sim.defaultClient.clientSecret;

		const lastSeq = () => sim.log.entries().at(-1)?.seq ?? 0;
		/** Log entries of the probe's own calls, and the tokens they were issued. */
		const probeSeqs = new Set<number>();
		let probeTokens = 0;
		const asProbe = async <T>(call: () => Promise<T>): Promise<T> => {
			const seq = lastSeq();
			const tokens = sim.log.tokensIssued();
			try {
				return await call();
			} finally {
				probeTokens += sim.log.tokensIssued() - tokens;
				for (const entry of sim.log.entries()) if (entry.seq > seq) probeSeqs.add(entry.seq);
			}
		};
		const directToken = async (secret: string) =>
			await asProbe(async () => {
				const answer = await post(
					simAgent,
					`${sim.identityUrl}${GRANT_PATH}`,
					new URLSearchParams({
						...tokenRequestForm(clientId, secret, sim.defaultClient.scope),
					}).toString(),
					{ 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
				);
				return {
					status: answer.status,
					token: answer.status === 200 ? readAccessToken(answer.text) : undefined,
				};
			});
		const directGet = async (token: string) =>
			await asProbe(
				async () =>
					(
						await post(
							simAgent,
							`${sim.serviceUrl}${paths.invoice(numbers[0])}`,
							undefined,
							{ authorization: `Bearer ${token}`, accept: 'application/json' },
							'GET',
						)
					).status,
			);

		/** Per minute of traffic: its first log entry, the simulated time it began, n8n's token exchanges. */
		const minutes: Array<{
			minute: number;
			fromSeq: number;
			startedAt: number;
			exchanges: number;
		}> = [];
		let rotationSeq = 0;

		ctx.say(
			`  token: ${tokenMinutes} simulated minutes, ${tokenRunsPerMinute} runs of ${tokenItemsPerRun} items each per minute, rotation at minute ${rotationMinute}`,
		);
		for (let minute = 0; minute < tokenMinutes; minute++) {
			if (minute > 0) sim.clock.advance(MINUTE);
			if (minute === rotationMinute) {
				// A token issued under the old secret, to watch it outlive the rotation.
				probe.oldToken = (await directToken(oldSecret)).token ?? '';
				const rotated = sim.updateClientSecret(clientId);
				const patched = await n8n.api('PATCH', `/credentials/${credential.id}`, {
					data: { clientSecret: rotated.clientSecret },
					isPartialData: true,
				});
				if (patched.status !== 200)
					throw new Error(`credential update: ${patched.status} ${printable(patched.text)}`);
				probe.oldSecretRefused = (await directToken(oldSecret)).status === 401;
				probe.keptWorking = (await directGet(probe.oldToken)) === 200;
				rotationSeq = lastSeq();
			}
			if (minute === rotationMinute + 60)
				probe.refusedAfterExpiry = (await directGet(probe.oldToken)) === 401;
			const tokensAtStart = sim.log.tokensIssued();
			const fromSeq = lastSeq() + 1;
			const startedAt = sim.clock.now().getTime();
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
						failures.push(
							`minute ${minute}: HTTP ${answer.status} ${printable(answer.text.slice(0, 160))}`,
						);
					}
				}),
			);
			minutes.push({
				minute,
				fromSeq,
				startedAt,
				exchanges: sim.log.tokensIssued() - tokensAtStart,
			});
		}

		// n8n's requests: the log without the probe's.
		const n8nEntries = sim.log.entries().filter((entry) => !probeSeqs.has(entry.seq));
		const minuteOf = (entry: RequestLogEntry) =>
			[...minutes].reverse().find((traffic) => traffic.fromSeq <= entry.seq)?.minute ?? -1;
		const nodeExchanges = sim.log.tokensIssued() - probeTokens;
		const exchangeMinutes = minutes.flatMap((traffic) =>
			Array.from({ length: traffic.exchanges }, () => traffic.minute),
		);
		const beforeTraffic = sim.log.tokensIssued() - probeTokens - exchangeMinutes.length;
		const allowed = Math.ceil(tokenMinutes / 60) + 1;
		const refusals = n8nEntries.filter((entry) => entry.route !== 'token' && entry.status === 401);

		// Around the rotation, from n8n's own requests in the log.
		const rotation = rotationAsLogged(n8nEntries, rotationSeq, clientId, minutes);
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
			'token exchanges by n8n (the probe’s own told apart by the token counter; minute of traffic of each)',
			`${nodeExchanges} (minutes ${exchangeMinutes.join(', ')}${beforeTraffic ? `; ${beforeTraffic} before the traffic` : ''})`,
			`${Math.ceil(tokenMinutes / 60)}–${allowed} (one per 60 min, + one for the rotation)`,
			nodeExchanges <= allowed && nodeExchanges >= Math.ceil(tokenMinutes / 60),
			`the probe made ${probeTokens} of the ${sim.log.tokensIssued()} exchanges`,
		);
		ctx.report.check(
			ITEM,
			`n8n after the rotation at minute ${rotationMinute}: requests until the old token's expiry succeed with it (no exchange) / first refusal at its expiry / next exchange succeeds with the new secret, the old one never tried`,
			`${rotation.keptWorking} / ${rotation.refusedAtExpiry} / ${rotation.newSecret}`,
			'yes / yes / yes',
			rotation.ok,
			rotation.note,
		);
		ctx.report.check(
			ITEM,
			`the service itself (direct calls at minute ${rotationMinute}): old secret refused / old token still accepted / old token refused after it expired`,
			`${probe.oldSecretRefused ? 'yes' : 'no'} / ${probe.keptWorking ? 'yes' : 'no'} / ${probe.refusedAfterExpiry ? 'yes' : 'no'}`,
			'yes / yes / yes',
			probe.oldSecretRefused && probe.keptWorking && probe.refusedAfterExpiry,
		);
		ctx.report.info(
			ITEM,
			'requests the service refused (401) for an expired token; concurrent runs meeting it share one renewal',
			`${refusals.length} (minutes ${refusals.map(minuteOf).join(', ')})`,
			'—',
			'the credential was updated with a partial PATCH, so n8n kept using the old token until the service refused it',
		);
	} finally {
		await agent.close();
		await simAgent.close();
		await sim.close();
	}
}

/**
 * What n8n's requests after the rotation show: until the token it held at the rotation expired,
 * its requests succeeded for this client with no token exchange in between (so with that token);
 * the first refusal came at that expiry, in the first minute of traffic after it; the next exchange
 * succeeded (the old secret no longer works, so it was the new one) and none was refused.
 */
function rotationAsLogged(
	entries: RequestLogEntry[],
	rotationSeq: number,
	clientId: string,
	minutes: Array<{ minute: number; fromSeq: number; startedAt: number }>,
) {
	const tokens = entries.filter((entry) => entry.route === 'token');
	const held = tokens.filter((entry) => entry.seq < rotationSeq && entry.status === 200).at(-1);
	// The log keeps whole seconds: the token expired within the second after this.
	const expiresAt = held ? Date.parse(held.at) + TOKEN_LIFETIME_MS : Number.NaN;
	const after = entries.filter((entry) => entry.seq > rotationSeq);
	const service = after.filter((entry) => entry.route !== 'token');
	const refusal = service.find((entry) => entry.status === 401);
	const until = service.filter((entry) => !refusal || entry.seq < refusal.seq);
	const exchangedBefore = after.some(
		(entry) => entry.route === 'token' && (!refusal || entry.seq < refusal.seq),
	);
	const keptWorking =
		until.length > 0 &&
		!exchangedBefore &&
		until.every(
			(entry) =>
				entry.status === 200 &&
				entry.clientId === clientId &&
				Date.parse(entry.at) < expiresAt + 1000,
		);
	// The first minute of traffic that began once the token had certainly expired.
	const firstExpired = minutes.find((traffic) => traffic.startedAt >= expiresAt + 1000);
	const refusalMinute = refusal
		? [...minutes].reverse().find((traffic) => traffic.fromSeq <= refusal.seq)
		: undefined;
	const refusedAtExpiry =
		refusal !== undefined &&
		refusal.clientId === clientId &&
		Date.parse(refusal.at) >= expiresAt &&
		firstExpired !== undefined &&
		refusalMinute !== undefined &&
		refusalMinute.minute <= firstExpired.minute;
	const next = refusal
		? after.find((entry) => entry.route === 'token' && entry.seq > refusal.seq)
		: undefined;
	const tokenCalls = after.filter((entry) => entry.route === 'token');
	const newSecret =
		next !== undefined &&
		next.status === 200 &&
		next.clientId === clientId &&
		tokenCalls.every((entry) => entry.status === 200);
	return {
		ok: keptWorking && refusedAtExpiry && newSecret,
		keptWorking: keptWorking ? `yes (${until.length} requests)` : 'no',
		refusedAtExpiry: refusedAtExpiry ? `yes (minute ${refusalMinute?.minute})` : 'no',
		newSecret: newSecret ? 'yes' : 'no',
		note: held
			? `token held at the rotation: issued ${held.at}, expired ${new Date(expiresAt).toISOString().slice(0, 19)}Z; first refusal ${refusal?.at ?? 'none'}; next exchange ${next ? `${next.at} → ${next.status}` : 'none'}; token calls after the rotation: ${tokenCalls.map((entry) => entry.status).join(', ') || 'none'}`
			: 'no token exchange by n8n before the rotation in the log',
	};
}
