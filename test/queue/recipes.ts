/* eslint-disable @n8n/community-nodes/no-restricted-imports */
/**
 * "Each event once, even across webhook processes": the recipe of docs/examples/
 * new-invoice-exactly-once.json (the event ID recorded in a PostgreSQL table whose primary key
 * refuses a second copy) and, for comparison, n8n's Remove Duplicates node in its place, published
 * on a queue-mode cluster. Used by the queue suite (which judges the recipe under a burst) and by
 * `npm run measure:dedup` (which measures both under bursts of several sizes).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { DELIVERY_KEY_PARAMETER } from '../../nodes/InvoicingAssets/transport/contract';
import { waitFor, type Execution } from '../n8n/executions';
import { createCredential, type CredentialReference } from '../n8n/credentials';
import { EXAMPLES, loadExample, type WorkflowFile } from '../n8n/examples';
import type { N8nInstance } from '../n8n/instance';
import { REPOSITORY } from '../n8n/package';
import type { Simulator } from '../simulator';
import type { RunningPostgres } from './services';

export const RECIPE_NODES = {
	trigger: 'New Invoice Issued',
	record: 'Record Event ID',
	onlyNew: 'Only New Events',
	work: 'Get Invoice with Its Assets',
	removeDuplicates: 'Skip Events Already Processed',
};

/** The database the recipe's table is created in (any database the workers reach will do). */
export const EVENTS_DATABASE = 'invoicing_events';

const MINUTE = 60_000;

/** The recipe's CREATE TABLE statement, as docs/repeated-deliveries.md gives it to users. */
export function eventsTableSql(): string {
	const doc = readFileSync(join(REPOSITORY, 'docs/repeated-deliveries.md'), 'utf8');
	const statement = /```sql\n\s*(CREATE TABLE [\s\S]*?)```/.exec(doc)?.[1];
	if (!statement) throw new Error('docs/repeated-deliveries.md has no CREATE TABLE block');
	return statement;
}

/** Creates the recipe's database and, with the documented statement, its table (once). */
export function createEventsTable(postgres: RunningPostgres) {
	postgres.sql(`CREATE DATABASE ${EVENTS_DATABASE}`);
	postgres.sql(eventsTableSql(), EVENTS_DATABASE);
}

/** The credentials a recipe needs, created on the main: the service's and PostgreSQL's. */
export async function createRecipeCredentials(
	main: N8nInstance,
	sim: Simulator,
	postgres: RunningPostgres,
): Promise<{ service: CredentialReference; postgres: CredentialReference }> {
	const answer = await main.api<{ id: string; name: string }>('POST', '/credentials', {
		name: 'Postgres account',
		type: 'postgres',
		data: {
			host: '127.0.0.1',
			port: postgres.port,
			database: EVENTS_DATABASE,
			user: postgres.user,
			password: 'unused-trust-auth',
			ssl: 'disable',
			allowUnauthorizedCerts: false,
			maxConnections: 100,
		},
	});
	if (answer.status !== 200)
		throw new Error(`credential postgres: ${answer.status} ${answer.text}`);
	return {
		service: await createCredential(main, sim, 'Invoicing & Assets account (exactly once)'),
		postgres: { id: answer.body.id, name: answer.body.name },
	};
}

/** docs/examples/new-invoice-exactly-once.json, bound to the credentials. */
export function exactlyOnceRecipe(credentials: {
	service: CredentialReference;
	postgres: CredentialReference;
}): WorkflowFile {
	return loadExample(EXAMPLES.exactlyOnce, credentials.service, {
		postgres: credentials.postgres,
	});
}

/**
 * The same workflow with n8n's Remove Duplicates node (Remove Items Processed in Previous
 * Executions, on `eventId`) in place of Record Event ID and Only New Events: the recipe the docs
 * gave before the exactly-once one. `scope` and `historySize` are the node's options (n8n's
 * defaults: node, 10,000).
 */
export function removeDuplicatesRecipe(
	credentials: { service: CredentialReference; postgres: CredentialReference },
	options: { scope?: 'node' | 'workflow'; historySize?: number } = {},
): WorkflowFile {
	const workflow = exactlyOnceRecipe(credentials);
	const [trigger, record, , work] = workflow.nodes;
	const removeDuplicates = {
		id: record.id,
		name: RECIPE_NODES.removeDuplicates,
		type: 'n8n-nodes-base.removeDuplicates',
		typeVersion: 2,
		position: record.position,
		parameters: {
			operation: 'removeItemsSeenInPreviousExecutions',
			dedupeValue: '={{ $json.eventId }}',
			options: { ...options },
		},
	};
	return {
		...workflow,
		name: `Remove Duplicates (${options.scope ?? 'node'}, history ${options.historySize ?? 10000})`,
		nodes: [trigger, removeDuplicates, work],
		connections: {
			[trigger.name]: { main: [[{ node: removeDuplicates.name, type: 'main', index: 0 }]] },
			[removeDuplicates.name]: { main: [[{ node: work.name, type: 'main', index: 0 }]] },
		},
	};
}

export interface PublishedRecipe {
	id: string;
	subscriptionId: string;
	/** Posts an event to this workflow's production webhook on `process`, as the service would. */
	deliver(process: N8nInstance, event: unknown): Promise<number>;
	/**
	 * Resolves once each process checks deliveries against the stored key: the subscription exists
	 * a moment before n8n has saved the trigger's key hash, and a delivery in between gets 401. An
	 * empty body with the right key then gets 400 and starts nothing.
	 */
	acceptedAt(...processes: N8nInstance[]): Promise<void>;
	unpublish(): Promise<void>;
}

function subscriptionsOf(sim: Simulator, hookId: string) {
	return sim.subscriptions
		.list()
		.filter((subscription) => subscription.notificationUrl.includes(hookId));
}

/** Creates and publishes `workflow` on the main; resolves once the service holds its subscription. */
export async function publishRecipe(
	main: N8nInstance,
	sim: Simulator,
	workflow: WorkflowFile,
): Promise<PublishedRecipe> {
	const trigger = workflow.nodes.find((node) => node.name === RECIPE_NODES.trigger);
	const hookId = String(trigger?.webhookId);
	const answer = await main.api<{ id: string }>('POST', '/workflows', workflow);
	if (answer.status !== 200) throw new Error(`workflow: ${answer.status} ${answer.text}`);
	const published = await main.api('POST', `/workflows/${answer.body.id}/publish`);
	if (published.status !== 200) throw new Error(`publish: ${published.status} ${published.text}`);
	const [subscription] = await waitFor(
		`the subscription of ${workflow.name}`,
		() => (subscriptionsOf(sim, hookId).length === 1 ? subscriptionsOf(sim, hookId) : undefined),
		2 * MINUTE,
	);
	const key = new URL(subscription.notificationUrl).searchParams.get(DELIVERY_KEY_PARAMETER);
	const deliver = async (process: N8nInstance, event: unknown) =>
		(
			await process.http('POST', `/webhook/${hookId}/webhook?${DELIVERY_KEY_PARAMETER}=${key}`, {
				rawBody: JSON.stringify(event),
				headers: { 'content-type': 'application/json' },
			})
		).status;
	return {
		id: answer.body.id,
		subscriptionId: subscription.id,
		deliver,
		acceptedAt: async (...processes) => {
			for (const process of processes) {
				await waitFor(
					`the key of ${workflow.name} at ${process.url}`,
					async () => (await deliver(process, {})) === 400,
					MINUTE,
					250,
				);
			}
		},
		unpublish: async () => {
			const answered = await main.api('POST', `/workflows/${answer.body.id}/unpublish`);
			if (answered.status !== 200) throw new Error(`unpublish: ${answered.status}`);
			await waitFor('no subscription', () => subscriptionsOf(sim, hookId).length === 0, 2 * MINUTE);
		},
	};
}

/** How many items a node output in an execution; undefined when the node did not run. */
export function itemsOut(execution: Execution, node: string): number | undefined {
	const runs = execution.data?.resultData.runData[node];
	return runs ? (runs[0]?.data?.main[0]?.length ?? 0) : undefined;
}

/** True when the execution did the event's work: the recipe's last node ran on one item. */
export function didTheWork(execution: Execution): boolean {
	return itemsOut(execution, RECIPE_NODES.work) === 1;
}
