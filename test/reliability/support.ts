/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/** What the reliability checks share: sizes, the run context, real-n8n helpers and an HTTPS client. */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';

import { expectNoSecret } from '../harness/secrets';
import type { N8nInstance } from '../n8n/instance';
import { onShutdown } from '../n8n/shutdown';
import {
	CA_DIR_ENV,
	SECRET_MARKER_ENV,
	startSimulator,
	type FaultRule,
	type Simulator,
	type SimulatorOptions,
} from '../simulator';
import type { Report } from './report';

export interface Sizes {
	soakCycles: number;
	soakRestarts: number;
	defaultModeCycles: number;
	deliveryConcurrency: number;
	comparisonDeliveries: number;
	httpRequestItems: number;
	httpRequestRepeats: number;
	/** Return All against the HTTP Request node: invoices listed, runs each, service latency. */
	returnAllInvoices: number;
	returnAllRepeats: number;
	returnAllLatencyMs: number;
	fuzzValues: number;
	malformedBodies: number;
}

export const FULL_SIZES: Sizes = {
	soakCycles: 200,
	soakRestarts: 5,
	defaultModeCycles: 40,
	deliveryConcurrency: 20,
	comparisonDeliveries: 2000,
	httpRequestItems: 2000,
	httpRequestRepeats: 3,
	returnAllInvoices: 20_000,
	returnAllRepeats: 3,
	returnAllLatencyMs: 20,
	fuzzValues: 10_000,
	malformedBodies: 1000,
};

export const CI_SIZES: Sizes = {
	soakCycles: 30,
	soakRestarts: 2,
	defaultModeCycles: 8,
	deliveryConcurrency: 20,
	comparisonDeliveries: 200,
	httpRequestItems: 200,
	httpRequestRepeats: 1,
	returnAllInvoices: 2000,
	returnAllRepeats: 1,
	returnAllLatencyMs: 20,
	fuzzValues: 1000,
	malformedBodies: 200,
};

/** Everything the run printed (stdout and stderr), in `<workDir>/own/`, for the secret scan. */
export const OWN_OUTPUT_FILE = 'run-output.txt';

export interface RunContext {
	ci: boolean;
	/** --judge-speed: speed goals judged at any size (to see them fail or pass on a short run). */
	judgeSpeed: boolean;
	sizes: Sizes;
	report: Report;
	/** This run's temporary folder (secret records, n8n artifacts, collected errors). */
	workDir: string;
	/** Where this run keeps what the secret scan reads (its output, records, artifacts, errors). */
	ownDir: string;
	/** Error messages the checks saw (node errors, n8n answers), for the secret scan. */
	errorMessages: string[];
	/** Progress, on stderr (stdout carries only the table). */
	say(text: string): void;
	/** The default-mode n8n shared by the real-n8n checks, started on first use. */
	mainN8n(): Promise<N8nInstance>;
}

/* ------------------------------------------------------------ simulators */

/** Every simulator of this run, for `printable`. */
const simulators = new Set<Simulator>();

/** Records a simulator's secrets for `printable`, and closes it if the run is interrupted. */
function track<T extends { close(): Promise<void> }>(sim: Simulator, owner: T): T {
	simulators.add(sim);
	const forget = onShutdown(async () => await owner.close());
	const close = owner.close.bind(owner);
	owner.close = async () => {
		forget();
		await close();
	};
	return owner;
}

/** A simulator for one check: its secrets known to `printable`, closed if the run is interrupted. */
export async function startTrackedSimulator(options: SimulatorOptions): Promise<Simulator> {
	const sim = await startSimulator(options);
	return track(sim, sim);
}

/** The same for a harness testbed (its simulator and n8n-core harness). */
export function trackTestbed<T extends { sim: Simulator; close(): Promise<void> }>(testbed: T): T {
	return track(testbed.sim, testbed);
}

/** True when none of `secrets` occurs in `value` (a check that never prints them). */
export function holdsNone(
	value: unknown,
	secrets: ReadonlyMap<string, string> | Iterable<string>,
): boolean {
	try {
		expectNoSecret(value, secrets);
		return true;
	} catch {
		return false;
	}
}

/**
 * `text` when it holds no secret of this run (the marker, or any secret a simulator of this run
 * issued or received), else a note naming only the kind: the report and the progress lines go to
 * the terminal and CI logs, which must never show a secret, even when a check found a leak.
 */
export function printable(text: string): string {
	const secrets = new Map<string, string>();
	const marker = process.env[SECRET_MARKER_ENV];
	if (marker) secrets.set(marker, 'marked test secret');
	for (const sim of simulators) for (const [value, kind] of sim.secrets()) secrets.set(value, kind);
	if (secrets.size === 0) return text;
	try {
		expectNoSecret(text, secrets, 'this text');
		return text;
	} catch (error) {
		return `[withheld: ${(error as Error).message}]`;
	}
}

/* ---------------------------------------------------------------- real n8n */

export const PACKAGE_NODE = 'n8n-nodes-invoicing-assets';
export {
	CREDENTIAL_TYPE,
	createCredential,
	type CredentialReference as CredentialRef,
} from '../n8n/credentials';

export async function createWorkflow(n8n: N8nInstance, workflow: unknown): Promise<string> {
	const created = await n8n.api<{ id: string }>('POST', '/workflows', workflow);
	if (created.status !== 200) throw new Error(`workflow: ${created.status} ${created.text}`);
	return created.body.id;
}

/** A workflow a webhook at a new random path starts, created and published: its ID and URL. */
export async function publishWebhookWorkflow(
	n8n: N8nInstance,
	build: (path: string) => unknown,
): Promise<{ workflowId: string; url: string }> {
	const path = randomUUID();
	const workflowId = await createWorkflow(n8n, build(path));
	const published = await n8n.api('POST', `/workflows/${workflowId}/publish`);
	if (published.status !== 200) throw new Error(`publish: ${published.status} ${published.text}`);
	return { workflowId, url: `${n8n.url}/webhook/${path}` };
}

/* -------------------------------------------------------------- https client */

/** An undici agent that trusts the test CA, for requests to n8n's webhooks. */
export function httpsAgent(connections = 32): Agent {
	const caDir = process.env[CA_DIR_ENV];
	const ca = caDir ? [readFileSync(join(caDir, 'ca.pem'), 'utf8')] : undefined;
	return new Agent({ connect: { ca }, connections, keepAliveTimeout: 10_000 });
}

export interface Posted {
	status: number;
	text: string;
	ms: number;
}

export async function post(
	agent: Agent,
	url: string,
	body: string | Buffer | undefined,
	headers: Record<string, string> = { 'content-type': 'application/json' },
	method: 'POST' | 'GET' = 'POST',
): Promise<Posted> {
	const started = performance.now();
	const response = await request(url, {
		method,
		headers,
		body,
		dispatcher: agent,
		headersTimeout: 120_000,
		bodyTimeout: 120_000,
	});
	const text = await response.body.text();
	return { status: response.statusCode, text, ms: performance.now() - started };
}

/**
 * Rules whose overall shares are the given ones: the injector applies the first rule whose roll
 * passes, so each rule's probability is its share of what the rules before it let through.
 */
export function exclusiveFaults(rules: Array<FaultRule & { share: number }>): FaultRule[] {
	let left = 1;
	return rules.map(({ share, ...rule }) => {
		const probability = share / left;
		left -= share;
		return { ...rule, probability };
	});
}
