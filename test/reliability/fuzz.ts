/* eslint-disable @n8n/community-nodes/no-restricted-imports */
/**
 * Generated invoice numbers, asset IDs and filter values through the action node (harness,
 * one run per value, Continue On Fail off so that each error keeps its class). The simulator's
 * request log must show every request on the intended route with the value intact (URL-decoded
 * once), and every rejection must be a clear NodeOperationError or NodeApiError.
 */
import { isDeepStrictEqual } from 'node:util';
import type { IDataObject } from 'n8n-workflow';

import { mapWithConcurrency } from '../../nodes/InvoicingAssets/actions/concurrency';
import { startTestbed } from '../harness/testbed';
import type { NodeRun } from '../harness/workflow';
import type { LoggedRoute, Simulator } from '../simulator';
import { createRandom, type Random } from '../simulator/random';
import { count } from './report';
import { trackTestbed, type RunContext } from './support';

const ITEM = '6 fuzzing';

const PIECES = [
	'/',
	'..',
	'.',
	'%2F',
	'%2f',
	'%2e%2e',
	'%252F',
	'%',
	'%zz',
	'%00',
	'?',
	'#',
	'&',
	'=',
	'+',
	';',
	',',
	'\\',
	' ',
	'\t',
	'\n',
	'\r',
	'\u0000',
	'\u0001',
	'\u001f',
	'\u007f',
	'\u0085',
	'\u00a0',
	'\u2028',
	'\u2029',
	'\u200b',
	'\u200e',
	'\u202e',
	'\ufeff',
	'\ufffd',
	'é',
	'e\u0301',
	'ß',
	'İ',
	'漢字',
	'Ω',
	'😀',
	'👍🏽',
	'\ud800',
	'\udfff',
	'"',
	"'",
	'<',
	'>',
	'`',
	'|',
	'^',
	'[',
	']',
	'{',
	'}',
	'{{',
	'}}',
	'$',
	'@',
	':',
	'~',
	'*',
	'!',
	'(',
	')',
	'null',
	'undefined',
	'../',
	'/..',
	'?x=1',
	'#frag',
	'&apiKey=x',
	'\r\nX-Injected: 1',
	'%0d%0a',
	'INV-',
	'AST-',
];
const EDGE = [
	'',
	' ',
	'\t\n',
	'.',
	'..',
	' .. ',
	'%2e',
	'%2E%2E',
	'/',
	'?',
	'#',
	'\u00a0',
	'\ufeff',
];
const TEN_KB = 10 * 1024;

function asciiRun(random: Random, length: number): string {
	let text = '';
	for (let i = 0; i < length; i++) text += String.fromCharCode(random.int(32, 126));
	return text;
}

function tenKilobytes(random: Random): string {
	const kinds = [
		() => 'A'.repeat(TEN_KB),
		() => asciiRun(random, TEN_KB),
		() => 'é'.repeat(TEN_KB / 2),
		() => '/'.repeat(TEN_KB),
		() => '%2F'.repeat(Math.ceil(TEN_KB / 3)),
		() => '😀'.repeat(TEN_KB / 4),
		() => {
			let text = '';
			while (text.length < TEN_KB) text += random.pick(PIECES);
			return text;
		},
	];
	return random.pick(kinds)();
}

/** One generated value; `real` values of the target make some of them exist once trimmed. */
export function fuzzValue(random: Random, real: readonly string[]): string {
	const roll = random.next();
	if (roll < 0.02) return tenKilobytes(random);
	if (roll < 0.1) {
		const pad = () => random.pick(['', ' ', '\t', '\n', '\u00a0', '\ufeff', '  \r\n']);
		return `${pad()}${random.pick(real)}${pad()}`;
	}
	if (roll < 0.15) return random.pick(EDGE);
	if (roll < 0.3) {
		const base = random.pick(real);
		const at = random.int(0, base.length);
		return `${base.slice(0, at)}${random.pick(PIECES)}${base.slice(at)}`;
	}
	let text = '';
	for (let i = random.int(1, 8); i > 0; i--) {
		text += random.next() < 0.6 ? random.pick(PIECES) : asciiRun(random, random.int(1, 6));
	}
	return text;
}

interface Target {
	label: string;
	route: LoggedRoute;
	/** The path parameter's name, or the query argument's. */
	name: string;
	where: 'path' | 'query';
	parameters: IDataObject;
	/** The values a real record has, for this target. */
	real(sim: Simulator): string[];
	/** Whether an output record is right for the trimmed value. */
	matches(sim: Simulator, record: Record<string, unknown>, value: string): boolean;
	/** How many items a successful run returns for the trimmed value (known from the simulator's records). */
	items(sim: Simulator, value: string): number;
}

const expression = '={{ $json.value }}';

const TARGETS: Target[] = [
	{
		label: 'Invoice Get: Invoice Number',
		route: 'invoices.get',
		name: 'invoiceNumber',
		where: 'path',
		parameters: {
			resource: 'invoice',
			operation: 'get',
			invoiceNumber: { __rl: true, mode: 'number', value: expression },
		},
		real: (sim) => sim.data.invoices().map((invoice) => invoice.invoiceNumber),
		matches: (sim, record, value) => isDeepStrictEqual(record, sim.data.invoice(value)),
		items: () => 1,
	},
	{
		label: 'Managed Asset Get: Asset ID',
		route: 'assets.get',
		name: 'assetId',
		where: 'path',
		parameters: {
			resource: 'managedAsset',
			operation: 'get',
			assetId: { __rl: true, mode: 'id', value: expression },
		},
		real: (sim) => sim.data.assets().map((asset) => asset.assetId),
		matches: (sim, record, value) => isDeepStrictEqual(record, sim.data.asset(value)),
		items: () => 1,
	},
	{
		label: 'Subscription Delete: Subscription ID',
		route: 'subscriptions.delete',
		name: 'id',
		where: 'path',
		parameters: {
			resource: 'subscription',
			operation: 'delete',
			subscriptionId: { __rl: true, mode: 'id', value: expression },
		},
		real: () => ['3f2c9a7e-1b4d-4c8e-9f0a-2d6b8e1c5a47'],
		matches: (_sim, record) => isDeepStrictEqual(record, { deleted: true }),
		items: () => 1,
	},
	...(['customerNumber'] as const).map(
		(name): Target => ({
			label: `Invoice Get Many: filter ${name}`,
			route: 'invoices.list',
			name,
			where: 'query',
			parameters: {
				resource: 'invoice',
				operation: 'getAll',
				returnAll: false,
				limit: 1,
				filters: { [name]: expression },
			},
			real: (sim) => sim.data.invoices().map((invoice) => String(invoice[name])),
			matches: (sim, record, value) =>
				(value === '' || record[name] === value) &&
				isDeepStrictEqual(record, sim.data.invoice(String(record.invoiceNumber))),
			// Limit 1: the first match, when there is one (an empty value sets no filter).
			items: (sim, value) =>
				value === '' || sim.data.invoices().some((invoice) => String(invoice[name]) === value)
					? 1
					: 0,
		}),
	),
	...(['type', 'site', 'customerNumber', 'serialNumber'] as const).map(
		(name): Target => ({
			label: `Managed Asset Get Many: filter ${name}`,
			route: 'assets.list',
			name,
			where: 'query',
			parameters: {
				resource: 'managedAsset',
				operation: 'getAll',
				returnAll: false,
				limit: 1,
				filters: { [name]: expression },
			},
			real: (sim) => sim.data.assets().map((asset) => String(asset[name] ?? '')),
			matches: (sim, record, value) =>
				(value === '' || record[name] === value) &&
				isDeepStrictEqual(record, sim.data.asset(String(record.assetId))),
			items: (sim, value) =>
				value === '' || sim.data.assets().some((asset) => String(asset[name] ?? '') === value)
					? 1
					: 0,
		}),
	),
];

/** Messages that are a raw JavaScript error rather than an explanation. */
const RAW_ERROR =
	/URI malformed|Cannot read|is not a function|is not defined|Unexpected token|\[object Object\]|Invalid URL|ERR_[A-Z_]+/;

const ABSENT = '<absent>';

type Outcome =
	| { kind: 'ok'; right: boolean; items: number; expectedItems: number }
	| { kind: 'error'; name: string; message: string; httpCode?: string; clear: boolean };

function outcomeOf(
	run: NodeRun,
	expectedItems: number,
	judge: (record: Record<string, unknown>) => boolean,
): Outcome {
	if (run.error) {
		const error = run.error as unknown as { name?: string; message?: string; httpCode?: string };
		const name = String(error.name ?? 'Error');
		const message = String(error.message ?? '');
		const clear =
			(name === 'NodeApiError' || name === 'NodeOperationError') &&
			message.trim() !== '' &&
			!RAW_ERROR.test(message);
		return { kind: 'error', name, message, httpCode: error.httpCode, clear };
	}
	// The count first: `every` over no item at all would call a missing record right.
	return {
		kind: 'ok',
		items: run.items.length,
		expectedItems,
		right:
			run.items.length === expectedItems &&
			run.items.every((item) => judge(item.json as Record<string, unknown>)),
	};
}

const show = (value: string) =>
	JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);

export async function fuzzCheck(ctx: RunContext) {
	const testbed = trackTestbed(await startTestbed({ invoices: 300, assets: 120 }));
	const { sim, harness, credential } = testbed;
	// Random values go through the nodes to the service on purpose; the simulator's answers are still checked.
	sim.contract.tolerate('fuzzing sends random values on purpose', { direction: 'request' });
	const random = createRandom('fuzz');
	let total = 0;
	let strayed = 0;
	let unclear = 0;
	let wrongRecords = 0;
	const strayExamples: string[] = [];
	const unclearExamples: string[] = [];
	const outcomes = { ok: 0, operation: 0, notFound: 0, otherApi: 0 };
	const perTarget = Math.ceil(ctx.sizes.fuzzValues / TARGETS.length);
	try {
		for (const target of TARGETS) {
			const real = target.real(sim).filter((value) => value !== '');
			const values = Array.from({ length: perTarget }, () => fuzzValue(random, real));
			sim.log.reset();
			const results = await mapWithConcurrency(values, 8, async (value) => {
				const trimmed = value.trim();
				const run = await harness.runNode({
					parameters: target.parameters,
					input: [{ json: { value } }],
					credential,
				});
				return {
					value,
					trimmed,
					outcome: outcomeOf(run, target.items(sim, trimmed), (record) =>
						target.matches(sim, record, trimmed),
					),
				};
			});
			total += values.length;

			// Which values reached the route: every success, and every answer of the route itself.
			const expected: string[] = [];
			for (const { value, trimmed, outcome } of results) {
				if (outcome.kind === 'ok') {
					outcomes.ok += 1;
					if (!outcome.right) {
						wrongRecords += 1;
						strayExamples.push(
							`${target.label}: wrong record for ${show(value)} (${outcome.items} items, ${outcome.expectedItems} expected)`,
						);
					}
					expected.push(target.where === 'query' && trimmed === '' ? ABSENT : trimmed);
					continue;
				}
				ctx.errorMessages.push(outcome.message);
				if (!outcome.clear) {
					unclear += 1;
					unclearExamples.push(
						`${target.label} ${show(value)}: ${outcome.name}: ${outcome.message.slice(0, 100)}`,
					);
				}
				if (outcome.name === 'NodeOperationError') outcomes.operation += 1;
				else if (outcome.httpCode === '404') {
					outcomes.notFound += 1;
					expected.push(trimmed);
				} else outcomes.otherApi += 1;
			}
			const logged = sim.log.entries().filter((entry) => entry.route !== 'token');
			const onRoute = logged
				.filter((entry) => entry.route === target.route)
				.map((entry) => {
					const found =
						target.where === 'path' ? entry.params[target.name] : entry.query[target.name];
					return found === undefined
						? ABSENT
						: typeof found === 'string'
							? found
							: JSON.stringify(found);
				});
			const offRoute = logged.filter((entry) => entry.route !== target.route);
			const missing = difference(expected, onRoute);
			const extra = difference(onRoute, expected);
			const strays = offRoute.length + missing.length + extra.length;
			strayed += strays;
			if (strays > 0) {
				strayExamples.push(
					`${target.label}: ${offRoute.length} off the route (${offRoute
						.slice(0, 2)
						.map((entry) => `${entry.method} ${entry.path.slice(0, 60)}`)
						.join(
							', ',
						)}), expected but not logged ${missing.slice(0, 2).map(show).join(', ')}, logged but not sent ${extra.slice(0, 2).map(show).join(', ')}`,
				);
			}
			ctx.say(`  fuzz: ${target.label}: ${values.length} values, ${strays} strays`);
		}
		ctx.report.info(
			ITEM,
			`generated values through the action node (${TARGETS.length} parameters, harness)`,
			count(total),
			'—',
			`outcomes: ${outcomes.ok} succeeded, ${outcomes.operation} NodeOperationError (checked locally), ${outcomes.notFound} NodeApiError 404, ${outcomes.otherApi} other NodeApiError`,
		);
		ctx.report.check(
			ITEM,
			'requests off the intended route, or with the value altered (simulator request log)',
			strayed + wrongRecords,
			'0',
			strayed + wrongRecords === 0,
			strayExamples.length ? strayExamples.slice(0, 4).join(' | ') : undefined,
		);
		ctx.report.check(
			ITEM,
			'rejections that were not a clear NodeOperationError / NodeApiError (crashes included)',
			unclear,
			'0',
			unclear === 0,
			unclearExamples.length ? unclearExamples.slice(0, 4).join(' | ') : undefined,
		);
	} finally {
		await testbed.close();
	}
}

/** The entries of `a` not matched one for one in `b`. */
function difference(a: string[], b: string[]): string[] {
	const left = new Map<string, number>();
	for (const value of b) left.set(value, (left.get(value) ?? 0) + 1);
	const rest: string[] = [];
	for (const value of a) {
		const n = left.get(value) ?? 0;
		if (n > 0) left.set(value, n - 1);
		else rest.push(value);
	}
	return rest;
}
