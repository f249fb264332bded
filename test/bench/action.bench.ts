/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/**
 * `npm run bench`: prints how fast the action node runs against the simulator, next to plain
 * undici clients doing the same job in the same run, as ratios against those same-run baselines.
 *
 * (a) Invoice Get for 2,000 input items: the node at its default concurrency, against undici
 *     opening a new TCP+TLS connection per request at the same concurrency (what n8n's HTTP
 *     helpers do: a fresh agent per request, so a full handshake without session resumption),
 *     the node one item at a time, and a keep-alive undici loop at the same concurrency.
 *     Target: node / new-connection client ≤ 1.3, in both passes. The node / keep-alive ratio is
 *     printed as what n8n's per-request connections cost, without a target.
 * (b) Invoice Get Many, Return All, over 20,000 invoices, against a keep-alive undici client
 *     reading the same number of pages at a time as the node (PAGE_CONCURRENCY), and a
 *     one-page-at-a-time keep-alive loop; with the peak RSS of each, measured in a fresh process.
 *     Target: node / keep-alive client with as many pages at a time ≤ 1.5 with the service
 *     latency added (below); the loopback figure is printed beside it.
 *
 * (c) The simulator itself: seeding 20,000 invoices and 3,000 assets over its control API (the
 *     in-process tests seed that many; how long it takes is a figure here, not a check there),
 *     against one keep-alive read of all 20,000 through the service (the paging loop of (b) on
 *     loopback). No target.
 *
 * (a) and (b) run twice: on loopback as it is, then with BENCH_SERVICE_LATENCY_MS (default 20 ms) added
 * by the simulator to every request, as a service across a network would answer. On loopback the
 * client's CPU is the whole cost of a request, so concurrency has little to overlap; the second
 * pass shows what it buys against a remote service.
 *
 * `npm run bench -- --check` exits 1 when a target is missed (or could not be measured), so a
 * regression is visible; CI does not run it, since timing on a shared machine is noise.
 *
 * The simulator runs in a child process, as a remote service would, and reports the TLS
 * connections it accepted and the CPU time it used: that shows that the "new connection" client
 * really paid one handshake per request, and where the time went. Each figure is the median of
 * BENCH_REPEATS runs (default 3) after a warm-up run.
 */
import '../harness/setup-env';

import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';

import { DEFAULT_CONCURRENCY } from '../../nodes/InvoicingAssets/actions/common.descriptions';
import { PAGE_CONCURRENCY } from '../../nodes/InvoicingAssets/transport/pageReader';
import { Harness } from '../harness/workflow';
import { SimulatorControlClient } from '../simulator/control-client';
import {
	firstInvoiceNumbers,
	nodeRun,
	peakRssOfListing,
	rawGets,
	rawListAll,
	SimulatorProcess,
} from './support';

const GET_ITEMS = 2_000;
const LIST_INVOICES = 20_000;
const REPEATS = Math.max(1, Number(process.env.BENCH_REPEATS ?? 3));
const CHECK = process.argv.slice(2).includes('--check');

interface Sample {
	label: string;
	ms: number;
	records: number;
	connections: number;
	clientCpuMs: number;
	serverCpuMs: number;
}

async function measure(
	sim: SimulatorProcess,
	label: string,
	expected: number,
	task: () => Promise<number>,
): Promise<Sample> {
	const before = await sim.stats();
	const cpuBefore = process.cpuUsage();
	const started = performance.now();
	const records = await task();
	const ms = performance.now() - started;
	const cpu = process.cpuUsage(cpuBefore);
	const after = await sim.stats();
	if (records !== expected)
		throw new Error(`${label}: expected ${expected} records, got ${records}`);
	return {
		label,
		ms,
		records,
		connections: after.connections - before.connections,
		clientCpuMs: (cpu.user + cpu.system) / 1000,
		serverCpuMs: after.cpuMs - before.cpuMs,
	};
}

interface Variant {
	label: string;
	expected: number;
	task: () => Promise<number>;
}

/**
 * Each variant's run with the median time. After one warm-up run of each, the variants take
 * turns, so that a slow spell of the machine weighs on all of them alike.
 */
async function medians(sim: SimulatorProcess, variants: Variant[]): Promise<Sample[]> {
	for (const variant of variants) await measure(sim, variant.label, variant.expected, variant.task);
	const samples = variants.map((): Sample[] => []);
	for (let repeat = 0; repeat < REPEATS; repeat++) {
		for (const [index, variant] of variants.entries()) {
			samples[index].push(await measure(sim, variant.label, variant.expected, variant.task));
		}
	}
	return samples.map((runs) => {
		const sorted = [...runs].sort((a, b) => a.ms - b.ms);
		return sorted[Math.floor(sorted.length / 2)];
	});
}

function table(rows: Sample[], unit: string): string {
	const perRecord = (ms: number, row: Sample) => ((ms / row.records) * 1000).toFixed(0);
	return [
		`| client | median ms | ${unit}s/s | TLS connections | client CPU µs/${unit} | client CPU / wall | simulator CPU µs/${unit} |`,
		'|---|---:|---:|---:|---:|---:|---:|',
		...rows.map((row) =>
			[
				'',
				row.label,
				row.ms.toFixed(0),
				((row.records / row.ms) * 1000).toFixed(0),
				row.connections,
				perRecord(row.clientCpuMs, row),
				`${((row.clientCpuMs / row.ms) * 100).toFixed(0)} %`,
				perRecord(row.serverCpuMs, row),
				'',
			]
				.join(' | ')
				.trim(),
		),
	].join('\n');
}

interface Target {
	label: string;
	limit: number;
	value?: number;
}

/** The bench's targets, each judged once in its pass; `--check` fails on a missed one. */
const TARGETS = {
	get: { label: '(a) Invoice Get, loopback: node / undici new connection per request', limit: 1.3 },
	getLatency: {
		label: '(a) Invoice Get, service latency: node / undici new connection per request',
		limit: 1.3,
	},
	list: {
		label: '(b) Return All, service latency: node / undici keep-alive, as many pages at a time',
		limit: 1.5,
	},
} satisfies Record<string, Target>;
const targets: Record<keyof typeof TARGETS, Target> = {
	get: { ...TARGETS.get },
	getLatency: { ...TARGETS.getLatency },
	list: { ...TARGETS.list },
};

const met = (target: Target) => target.value !== undefined && target.value <= target.limit;

function ratioLine(label: string, value: number, target?: Target) {
	if (!target) return `${label}: ${value.toFixed(2)}`;
	target.value = value;
	return `${label}: ${value.toFixed(2)} (target ≤ ${target.limit}: ${met(target) ? 'met' : 'MISSED'})`;
}

/** A remote service is never on loopback: the second pass adds this round trip to every request. */
const SERVICE_LATENCY_MS = Math.max(0, Number(process.env.BENCH_SERVICE_LATENCY_MS ?? 20));
const LATENCY_GET_ITEMS = 500;

interface Pass {
	title: string;
	getItems: number;
	latencyMs: number;
}

async function invoiceGetPass(sim: SimulatorProcess, harness: Harness, pass: Pass) {
	const out = (text = '') => process.stdout.write(`${text}\n`);
	const { state } = sim;
	const numbers = await firstInvoiceNumbers(state, pass.getItems);
	const input = numbers.map((invoiceNumber) => ({ json: { invoiceNumber } }));
	const getParameters = (concurrency?: number) => ({
		resource: 'invoice',
		operation: 'get',
		invoiceNumber: { __rl: true, mode: 'number', value: '={{ $json.invoiceNumber }}' },
		options: concurrency === undefined ? {} : { concurrency },
	});

	out(
		`\n(a) Invoice Get, ${pass.getItems} input items, ${pass.title} (one token fetch included on every side)`,
	);
	const [nodeDefault, rawFresh, nodeSequential, rawKeepAlive] = await medians(sim, [
		{
			label: `node, default concurrency ${DEFAULT_CONCURRENCY}`,
			expected: pass.getItems,
			task: async () => await nodeRun(harness, state, getParameters(), input),
		},
		{
			label: `undici, new connection per request, concurrency ${DEFAULT_CONCURRENCY}`,
			expected: pass.getItems,
			task: async () => await rawGets(state, numbers, DEFAULT_CONCURRENCY, true),
		},
		{
			label: 'node, concurrency 1',
			expected: pass.getItems,
			task: async () => await nodeRun(harness, state, getParameters(1), input),
		},
		{
			label: `undici, keep-alive, concurrency ${DEFAULT_CONCURRENCY}`,
			expected: pass.getItems,
			task: async () => await rawGets(state, numbers, DEFAULT_CONCURRENCY, false),
		},
	]);
	out(table([nodeDefault, rawFresh, nodeSequential, rawKeepAlive], 'item'));
	out();
	const freshRatio = nodeDefault.ms / rawFresh.ms;
	out(
		ratioLine(
			`node / undici new connection per request, both at concurrency ${DEFAULT_CONCURRENCY}`,
			freshRatio,
			pass.latencyMs === 0 ? targets.get : targets.getLatency,
		),
	);
	out(
		ratioLine(
			`node / undici keep-alive at concurrency ${DEFAULT_CONCURRENCY} (what n8n's per-request connections cost)`,
			nodeDefault.ms / rawKeepAlive.ms,
		),
	);
	out(
		ratioLine(
			'node concurrency 1 / default (what concurrency buys)',
			nodeSequential.ms / nodeDefault.ms,
		),
	);
	out(
		`  the node's process is busy ${((nodeDefault.clientCpuMs / nodeDefault.ms) * 100).toFixed(0)} % of the time at concurrency ${DEFAULT_CONCURRENCY} (CPU of all its threads / wall time)`,
	);
}

async function invoiceListPass(sim: SimulatorProcess, harness: Harness, pass: Pass) {
	const out = (text = '') => process.stdout.write(`${text}\n`);
	const { state } = sim;
	out(`\n(b) Invoice Get Many, Return All, ${LIST_INVOICES} invoices, ${pass.title}`);
	const [nodeList, rawList, rawListParallel] = await medians(sim, [
		{
			label: `node, Return All (up to ${PAGE_CONCURRENCY} pages at a time)`,
			expected: LIST_INVOICES,
			task: async () =>
				await nodeRun(
					harness,
					state,
					{ resource: 'invoice', operation: 'getAll', returnAll: true },
					[{ json: {} }],
				),
		},
		{
			label: 'undici, keep-alive paging loop',
			expected: LIST_INVOICES,
			task: async () => await rawListAll(state),
		},
		{
			label: `undici, keep-alive, ${PAGE_CONCURRENCY} pages at a time`,
			expected: LIST_INVOICES,
			task: async () => await rawListAll(state, PAGE_CONCURRENCY),
		},
	]);
	out(table([nodeList, rawList, rawListParallel], 'record'));
	out();
	out(
		ratioLine(
			`node / undici keep-alive, ${PAGE_CONCURRENCY} pages at a time (like for like)`,
			nodeList.ms / rawListParallel.ms,
			pass.latencyMs > 0 ? targets.list : undefined,
		),
	);
	out(
		ratioLine(
			`node (${PAGE_CONCURRENCY} pages at a time) / undici keep-alive paging loop, one page at a time (not like for like)`,
			nodeList.ms / rawList.ms,
		),
	);
	return rawList;
}

/** (c): seeding as many invoices as (b) reads, against that read (`readAll`, loopback). */
async function seedingFigure(control: SimulatorControlClient, readAll: Sample) {
	const out = (text = '') => process.stdout.write(`${text}\n`);
	const counts = { invoices: LIST_INVOICES, assets: 3000 };
	const times: number[] = [];
	for (let run = 0; run <= REPEATS; run++) {
		const started = performance.now();
		await control.seed(counts);
		if (run > 0) times.push(performance.now() - started); // the first is the warm-up
	}
	const ms = times.sort((a, b) => a - b)[Math.floor(times.length / 2)];
	out(
		`\n(c) the simulator: seeding ${counts.invoices} invoices and ${counts.assets} assets over its control API: ${ms.toFixed(0)} ms`,
	);
	out(
		ratioLine(
			`seeding / one keep-alive read of all ${LIST_INVOICES} invoices (${readAll.ms.toFixed(0)} ms, loopback)`,
			ms / readAll.ms,
		),
	);
}

async function main() {
	const out = (text = '') => process.stdout.write(`${text}\n`);
	const sim = await SimulatorProcess.start(LIST_INVOICES);
	const control = new SimulatorControlClient(sim.state.controlUrl);
	const harness = new Harness();
	try {
		out(
			`Node ${process.version}, ${cpus().length} CPUs, median of ${REPEATS} runs after a warm-up; simulator in a child process with ${sim.state.counts.invoices} invoices.`,
		);
		const loopback: Pass = {
			title: 'loopback, no added latency',
			getItems: GET_ITEMS,
			latencyMs: 0,
		};
		await invoiceGetPass(sim, harness, loopback);
		const readAll = await invoiceListPass(sim, harness, loopback);

		if (SERVICE_LATENCY_MS > 0) {
			out(
				`\nThe same with ${SERVICE_LATENCY_MS} ms added by the simulator to every request (a service across a network; BENCH_SERVICE_LATENCY_MS=0 skips this):`,
			);
			for (const route of ['token', 'invoices.get', 'invoices.list'] as const) {
				await control.addFault({ route, latencyMs: SERVICE_LATENCY_MS });
			}
			const remote: Pass = {
				title: `${SERVICE_LATENCY_MS} ms service latency`,
				getItems: LATENCY_GET_ITEMS,
				latencyMs: SERVICE_LATENCY_MS,
			};
			await invoiceGetPass(sim, harness, remote);
			await invoiceListPass(sim, harness, remote);
			await control.clearFaults();
		}

		const nodeRss = await peakRssOfListing(sim.state, 'node');
		const rawRss = await peakRssOfListing(sim.state, 'undici');
		out(
			`\npeak RSS of Get Many over ${LIST_INVOICES} invoices, each in a fresh process: node ${nodeRss.peakMb.toFixed(0)} MB (${nodeRss.baselineMb.toFixed(0)} MB before the run), undici loop ${rawRss.peakMb.toFixed(0)} MB (${rawRss.baselineMb.toFixed(0)} MB before)`,
		);
		await seedingFigure(control, readAll);
	} finally {
		await control.close();
		await sim.close();
	}
	out('\nTargets:');
	for (const target of Object.values(targets)) {
		const value = target.value === undefined ? 'not measured' : target.value.toFixed(2);
		out(`  ${target.label}: ${value}, target ≤ ${target.limit}: ${met(target) ? 'met' : 'MISSED'}`);
	}
	const missed = Object.values(targets).filter((target) => !met(target)).length;
	if (CHECK && missed > 0) {
		process.stderr.write(`bench --check: ${missed} target(s) missed\n`);
		process.exitCode = 1;
	}
}

main().catch((error: Error) => {
	process.stderr.write(`${error.stack ?? error.message}\n`);
	process.exit(1);
});
