/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/* eslint-disable @n8n/community-nodes/no-dangerous-functions -- benchmark tooling: runs the simulator in its own process */
/** The benchmark's simulator process and its clients: the node through n8n-core, and plain undici. */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';
import { Agent, request, type Dispatcher } from 'undici';

import { mapWithConcurrency } from '../../nodes/InvoicingAssets/actions/concurrency';
import {
	GRANT_PATH,
	MAX_PAGE_SIZE,
	pageQuery,
	paths,
	tokenRequestForm,
	type Invoice,
} from '../../nodes/InvoicingAssets/transport/contract';
import { readAccessToken, readPage } from '../../nodes/InvoicingAssets/transport/responses';
import type { Harness } from '../harness/workflow';
import type { SimulatorState } from '../simulator';

/* ------------------------------------------------------------ simulator process */

export class SimulatorProcess {
	private constructor(
		private readonly child: ChildProcess,
		readonly state: SimulatorState,
	) {}

	static async start(invoices: number): Promise<SimulatorProcess> {
		const child = fork(join(__dirname, 'simulator-process.ts'), [], {
			env: { ...process.env, BENCH_INVOICES: String(invoices) },
			stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
		});
		const state = await new Promise<SimulatorState>((resolve, reject) => {
			child.once('error', reject);
			child.once('exit', (code) => reject(new Error(`The simulator exited with code ${code}`)));
			child.on('message', (message: { type: string; state?: SimulatorState }) => {
				if (message.type === 'ready' && message.state) resolve(message.state);
			});
		});
		child.removeAllListeners('exit');
		return new SimulatorProcess(child, state);
	}

	/** TLS connections accepted and CPU time used by the simulator process so far. */
	async stats(): Promise<{ connections: number; cpuMs: number }> {
		return await new Promise((resolve) => {
			const onMessage = (message: { type: string; connections: number; cpuMs: number }) => {
				if (message.type !== 'stats') return;
				this.child.off('message', onMessage);
				resolve({ connections: message.connections, cpuMs: message.cpuMs });
			};
			this.child.on('message', onMessage);
			this.child.send({ type: 'stats' });
		});
	}

	async close() {
		await new Promise<void>((resolve) => {
			this.child.once('exit', () => resolve());
			this.child.send({ type: 'close' });
		});
	}
}

/** Peak RSS of one Get Many, Return All, run by `client` in a fresh process (see rss-probe.ts). */
export async function peakRssOfListing(
	state: SimulatorState,
	client: 'node' | 'undici',
): Promise<{ baselineMb: number; peakMb: number; records: number }> {
	const child = fork(join(__dirname, 'rss-probe.ts'), [client], {
		env: { ...process.env, BENCH_SIM_STATE: JSON.stringify(state) },
		stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
	});
	return await new Promise((resolve, reject) => {
		child.once('message', (message) =>
			resolve(message as { baselineMb: number; peakMb: number; records: number }),
		);
		child.once('exit', (code) => reject(new Error(`The RSS probe exited with code ${code}`)));
		child.once('error', reject);
	});
}

/* ------------------------------------------------------------------- clients */

export function credentialData(state: SimulatorState) {
	return {
		environment: 'production',
		baseUrl: state.serviceUrl,
		identityUrl: state.identityUrl,
		scope: state.defaultClient.scope,
		clientId: state.defaultClient.clientId,
		clientSecret: state.defaultClient.clientSecret,
		keyExpiresOn: '',
		accessToken: '',
	};
}

export async function fetchToken(state: SimulatorState, dispatcher: Dispatcher, reset: boolean) {
	const { clientId, clientSecret, scope } = state.defaultClient;
	const response = await request(`${state.identityUrl}${GRANT_PATH}`, {
		method: 'POST',
		dispatcher,
		reset,
		headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
		body: new URLSearchParams({ ...tokenRequestForm(clientId, clientSecret, scope) }).toString(),
	});
	const token = readAccessToken(await response.body.json());
	if (!token) throw new Error(`No token (HTTP ${response.statusCode})`);
	return token;
}

export async function getJson(url: string, token: string, dispatcher: Dispatcher, reset: boolean) {
	const response = await request(url, {
		dispatcher,
		reset,
		headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
	});
	const body = await response.body.json();
	if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode} for ${url}`);
	return body;
}

/** Invoice Get with undici; `fresh` opens a new connection (full TLS handshake) per request. */
export async function rawGets(
	state: SimulatorState,
	numbers: string[],
	concurrency: number,
	fresh: boolean,
): Promise<number> {
	const agent = fresh
		? new Agent({ connect: { maxCachedSessions: 0 } })
		: new Agent({ keepAliveTimeout: 10_000 });
	try {
		const token = await fetchToken(state, agent, fresh);
		const records = await mapWithConcurrency(numbers, concurrency, async (invoiceNumber) =>
			getJson(`${state.serviceUrl}${paths.invoice(invoiceNumber)}`, token, agent, fresh),
		);
		return records.length;
	} finally {
		await agent.close();
	}
}

/** The numbers of the first `count` invoices the service lists. */
export async function firstInvoiceNumbers(state: SimulatorState, count: number): Promise<string[]> {
	const agent = new Agent({ keepAliveTimeout: 10_000 });
	try {
		const token = await fetchToken(state, agent, false);
		const numbers: string[] = [];
		for (let page = 1; numbers.length < count; page++) {
			const query = new URLSearchParams(
				Object.fromEntries(
					Object.entries(pageQuery(page, MAX_PAGE_SIZE)).map(([key, value]) => [
						key,
						String(value),
					]),
				),
			);
			const items =
				readPage<Invoice>(
					await getJson(`${state.serviceUrl}${paths.invoices}?${query}`, token, agent, false),
				)?.items ?? [];
			if (items.length === 0) throw new Error(`The simulator has fewer than ${count} invoices`);
			numbers.push(...items.map((invoice) => invoice.invoiceNumber));
		}
		return numbers.slice(0, count);
	} finally {
		await agent.close();
	}
}

/**
 * Invoice Get Many, Return All, with a keep-alive undici paging loop: sequential, or with
 * `parallel` pages at a time once the first page told the total.
 */
export async function rawListAll(state: SimulatorState, parallel = 1): Promise<number> {
	const agent = new Agent({ keepAliveTimeout: 10_000 });
	const readPageAt = async (token: string, page: number) => {
		const query = new URLSearchParams(
			Object.fromEntries(
				Object.entries(pageQuery(page, MAX_PAGE_SIZE)).map(([key, value]) => [key, String(value)]),
			),
		);
		const envelope = readPage<Invoice>(
			await getJson(`${state.serviceUrl}${paths.invoices}?${query}`, token, agent, false),
		);
		return { items: envelope?.items ?? [], total: envelope?.totalItems ?? 0 };
	};
	try {
		const token = await fetchToken(state, agent, false);
		const first = await readPageAt(token, 1);
		const invoices: Invoice[] = [...first.items];
		if (parallel > 1) {
			const pages = Array.from(
				{ length: Math.ceil(first.total / MAX_PAGE_SIZE) - 1 },
				(_, index) => index + 2,
			);
			const rest = await mapWithConcurrency(pages, parallel, (page) => readPageAt(token, page));
			for (const page of rest) invoices.push(...page.items);
			return invoices.length;
		}
		let last = first;
		for (
			let page = 2;
			last.items.length === MAX_PAGE_SIZE && invoices.length < last.total;
			page++
		) {
			last = await readPageAt(token, page);
			invoices.push(...last.items);
		}
		return invoices.length;
	} finally {
		await agent.close();
	}
}

/** The node through n8n-core, with a credential whose token is still to be fetched. */
export async function nodeRun(
	harness: Harness,
	state: SimulatorState,
	parameters: IDataObject,
	input: INodeExecutionData[],
): Promise<number> {
	const credential = harness.addCredential(credentialData(state));
	const run = await harness.runNode({ parameters, input, credential });
	if (run.error) throw new Error(`The node failed: ${run.error.message}`);
	return run.items.length;
}
