import { LoadOptionsContext } from 'n8n-core';
import type {
	IDataObject,
	INode,
	INodeCredentialsDetails,
	INodeExecutionData,
	INodeListSearchResult,
} from 'n8n-workflow';
import { Workflow } from 'n8n-workflow';

import { eventually, pause } from '../../harness/eventually';
import { ACTION_NODE_TYPE, CREDENTIAL_TYPE } from '../../harness/node-types';
import { countRequestsSent } from '../../harness/requests-sent';
import { secretsOf, startTestbed, type Testbed } from '../../harness/testbed';
import { expectNoSecret } from '../../harness/secrets';
import type { NodeRun, RunNodeOptions } from '../../harness/workflow';
import * as listSearch from '../../../nodes/InvoicingAssets/methods/listSearch';
import { paths } from '../../../nodes/InvoicingAssets/transport/contract';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions read node output freely
export type Json = any;

/** A testbed per test file, with the log and faults cleared before each test. */
export function useTestbed(options: Parameters<typeof startTestbed>[0] = {}) {
	const holder = {} as { testbed: Testbed };
	beforeAll(async () => {
		holder.testbed = await startTestbed(options);
	});
	afterAll(async () => {
		await holder.testbed?.close();
	});
	beforeEach(() => {
		holder.testbed.sim.faults.clear();
		holder.testbed.sim.setListShape({});
		holder.testbed.sim.log.reset();
	});
	return holder;
}

/** Runs the action node with the testbed's credential unless another is given. */
export async function run(
	testbed: Testbed,
	parameters: IDataObject,
	options: Omit<RunNodeOptions, 'parameters'> = {},
): Promise<NodeRun> {
	return await testbed.harness.runNode({
		...options,
		credential: options.credential ?? testbed.credential,
		parameters,
	});
}

export function items(
	count: number,
	json: (index: number) => IDataObject = (index) => ({ index }),
) {
	return Array.from({ length: count }, (_, index): INodeExecutionData => ({ json: json(index) }));
}

/**
 * How many requests on `route` the run `start`s has on their way at once: from the `skip`-th on,
 * each is held at the simulator until `expected` are (a count, not a time: a loaded machine
 * gets the same answer), then a pause lets a limit above it show, and all go on.
 */
export async function heldAtOnce(
	testbed: Testbed,
	route: 'invoices.get' | 'assets.get',
	expected: number,
	start: () => Promise<NodeRun>,
	skip = 0,
): Promise<{ held: number; result: NodeRun }> {
	const hold = testbed.sim.faults.add({ route, hold: true, skip });
	const running = start();
	await eventually(() => testbed.sim.log.inFlight(route) >= expected);
	await pause(100);
	const held = testbed.sim.log.inFlight(route);
	testbed.sim.faults.remove(hold.id);
	return { held, result: await running };
}

/**
 * Runs `work` and then waits until every list request it sent has reached the simulator and been
 * answered (a failed run leaves the pages that were on their way), so that none counts in the
 * next test. Returns what `work` gave and how many list requests there were.
 */
export async function withEveryRequestAnswered<T>(
	testbed: Testbed,
	route: 'invoices.list',
	work: () => Promise<T>,
): Promise<{ outcome: T; requests: number }> {
	const sent = countRequestsSent();
	try {
		const outcome = await work();
		const { log } = testbed.sim;
		await eventually(
			() => log.count(route) === sent.to(paths.invoices) && log.inFlight(route) === 0,
		);
		return { outcome, requests: log.count(route) };
	} finally {
		sent.restore();
	}
}

/** The JSON of each output item. */
export function jsonOf(run: NodeRun): Json[] {
	return run.items.map((item) => item.json);
}

/** The page and page size of each list request, in page order (pages may be fetched in parallel). */
export function pageRequests(
	testbed: Testbed,
	route: 'invoices.list' | 'assets.list' | 'subscriptions.list' = 'invoices.list',
): Array<{ page: number; pageSize: number }> {
	return testbed.sim.log
		.entries({ route })
		.map((entry) => ({ page: Number(entry.query.page), pageSize: Number(entry.query.pageSize) }))
		.sort((a, b) => a.page - b.page);
}

export function pairedIndexes(run: NodeRun): number[] {
	return run.items.map((item) => {
		const paired = item.pairedItem;
		if (typeof paired === 'number') return paired;
		if (Array.isArray(paired)) return paired[0]?.item ?? -1;
		return paired?.item ?? -1;
	});
}

/** Every secret the testbed knows plus the given ones, for "appears nowhere" checks. */
export function expectNoSecrets(testbed: Testbed, value: unknown, extra: string[] = []) {
	expectNoSecret(value, [...secretsOf(testbed), ...extra], 'the node’s output or errors');
}

/** A real n8n-core LoadOptionsContext for the action node with the given credential, as the editor makes one. */
export function loadOptionsContext(
	testbed: Testbed,
	credential: INodeCredentialsDetails = testbed.credential,
): LoadOptionsContext {
	const node: INode = {
		id: 'node-under-test',
		name: 'Node Under Test',
		type: ACTION_NODE_TYPE,
		typeVersion: 1,
		position: [0, 0],
		parameters: {},
		credentials: { [CREDENTIAL_TYPE]: credential },
	};
	const workflow = new Workflow({
		id: 'list-search',
		nodes: [node],
		connections: {},
		active: false,
		nodeTypes: testbed.harness.nodeTypes,
	});
	const additionalData = testbed.harness.additionalData('manual', 'list-search', {
		id: 'list-search',
		name: 'list search',
		active: false,
		isArchived: false,
		nodes: [node],
		connections: {},
		createdAt: new Date(),
		updatedAt: new Date(),
		activeVersionId: null,
	});
	return new LoadOptionsContext(workflow, node, additionalData, 'parameters');
}

/** Calls a listSearch method of the node as the editor does, with a real LoadOptionsContext. */
export async function searchList(
	testbed: Testbed,
	method: keyof typeof listSearch,
	filter?: string,
	paginationToken?: string,
	credential: INodeCredentialsDetails = testbed.credential,
): Promise<INodeListSearchResult> {
	const context = loadOptionsContext(testbed, credential);
	return await (
		listSearch[method] as (
			this: LoadOptionsContext,
			filter?: string,
			token?: string,
		) => Promise<INodeListSearchResult>
	).call(context, filter, paginationToken);
}
