/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/**
 * Helpers for the simulator's own tests: an undici client over real HTTPS, tokens, and a tiny
 * HTTPS webhook receiver with a certificate from the simulator's CA.
 *
 * TLS is verified everywhere. Run under test/tools/with-test-ca.ts, the simulator's CA is trusted
 * through NODE_EXTRA_CA_CERTS and the clients use Node's default trust store unchanged; run
 * without it (plain `jest`), the clients trust the default store plus the simulator's CA.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage, Server as HttpServer } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getCACertificates } from 'node:tls';
import { Agent, request } from 'undici';

import { GRANT_PATH, tokenRequestForm } from '../../../nodes/InvoicingAssets/transport/contract';
import { DEVIATION_HEADER, type ClientRecord, type Simulator } from '../../simulator';
import { CA_KEY_FILE, issueCertificate, type CertificateFiles } from '../../simulator/tls';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test assertions read JSON freely
export type Json = any;

export interface ApiResponse {
	status: number;
	headers: Record<string, string | string[] | undefined>;
	text: string;
	json: Json;
}

/** True when NODE_EXTRA_CA_CERTS (set by with-test-ca) already holds the simulator's CA. */
export function caTrustedByEnvironment(sim: Simulator): boolean {
	const extra = process.env.NODE_EXTRA_CA_CERTS;
	if (!extra) return false;
	return readText(extra).includes(readText(sim.caCertPath).trim());
}

/** TLS trust for a client of the simulator; verification is never turned off. */
export function trustOptions(sim: Simulator): { ca?: string[] } {
	if (caTrustedByEnvironment(sim)) return {};
	return { ca: [...getCACertificates('default'), readText(sim.caCertPath)] };
}

export function createAgent(sim: Simulator, connect: Record<string, unknown> = {}): Agent {
	return new Agent({ connect: { ...trustOptions(sim), ...connect } });
}

export function caOf(sim: Simulator): CertificateFiles {
	return { certPath: sim.caCertPath, keyPath: join(sim.caDir, CA_KEY_FILE) };
}

export async function call(
	agent: Agent,
	url: string,
	init: {
		method?: string;
		token?: string;
		json?: unknown;
		body?: string;
		headers?: Record<string, string>;
	} = {},
): Promise<ApiResponse> {
	const headers: Record<string, string> = {
		accept: 'application/json',
		// The simulator's own tests probe its answers to any request, in the contract or not: their
		// requests are exempt from the contract check, the simulator's answers are not.
		[DEVIATION_HEADER]: 'a test of the simulator itself',
		...(init.headers ?? {}),
	};
	if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`;
	let body = init.body;
	if (init.json !== undefined) {
		body = JSON.stringify(init.json);
		headers['content-type'] ??= 'application/json';
	}
	const response = await request(url, {
		method: (init.method ?? 'GET') as 'GET',
		headers,
		body,
		dispatcher: agent,
	});
	const text = await response.body.text();
	let json: Json = undefined;
	try {
		json = text === '' ? undefined : JSON.parse(text);
	} catch {
		json = undefined;
	}
	return { status: response.statusCode, headers: response.headers, text, json };
}

export function requestToken(
	agent: Agent,
	sim: Simulator,
	form: Record<string, string>,
	contentType = 'application/x-www-form-urlencoded',
): Promise<ApiResponse> {
	return call(agent, `${sim.identityUrl}${GRANT_PATH}`, {
		method: 'POST',
		body: new URLSearchParams(form).toString(),
		headers: { 'content-type': contentType },
	});
}

export async function fetchToken(
	agent: Agent,
	sim: Simulator,
	client: Pick<ClientRecord, 'clientId' | 'clientSecret' | 'scope'> = sim.defaultClient,
): Promise<string> {
	const response = await requestToken(agent, sim, {
		...tokenRequestForm(client.clientId, client.clientSecret, client.scope),
	});
	if (response.status !== 200) {
		throw new Error(`Token request failed with ${response.status}: ${response.text}`);
	}
	return response.json.accessToken as string;
}

export interface ReceivedDelivery {
	url: string;
	method: string;
	headers: IncomingMessage['headers'];
	body: Json;
}

export interface Receiver {
	url: string;
	port: number;
	received: ReceivedDelivery[];
	/** Status for the next deliveries, in order; 200 once used up. */
	respondWith(...statuses: number[]): void;
	/** Forgets received deliveries and queued statuses. */
	reset(): void;
	close(): Promise<void>;
}

/** An HTTPS webhook receiver with a certificate for localhost issued by `ca`. */
export async function startReceiver(ca: CertificateFiles): Promise<Receiver> {
	const dir = mkdtempSync(join(tmpdir(), 'invoicing-receiver-'));
	const cert = issueCertificate(ca, dir, 'receiver');
	const server = createServer({
		key: readFileSync(cert.keyPath),
		cert: readFileSync(cert.certPath),
		minVersion: 'TLSv1.2',
	});
	return listenReceiver(server, 'https', () => rmSync(dir, { recursive: true, force: true }));
}

export async function listenReceiver(
	server: Server | HttpServer,
	protocol: 'http' | 'https',
	cleanup: () => void = () => undefined,
): Promise<Receiver> {
	const received: ReceivedDelivery[] = [];
	const statuses: number[] = [];
	const sockets = new Set<Socket>();
	server.on('connection', (socket: Socket) => {
		sockets.add(socket);
		socket.on('close', () => sockets.delete(socket));
	});
	server.on('request', (req: IncomingMessage, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			const text = Buffer.concat(chunks).toString('utf8');
			let body: Json = text;
			try {
				body = JSON.parse(text);
			} catch {
				body = text;
			}
			received.push({ url: req.url ?? '', method: req.method ?? '', headers: req.headers, body });
			res.writeHead(statuses.shift() ?? 200, { 'content-type': 'text/plain' });
			res.end('ok');
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const port = (server.address() as AddressInfo).port;
	return {
		url: `${protocol}://localhost:${port}`,
		port,
		received,
		respondWith: (...next) => statuses.push(...next),
		reset: () => {
			received.length = 0;
			statuses.length = 0;
		},
		close: async () => {
			await new Promise<void>((resolve) => {
				server.close(() => resolve());
				for (const socket of sockets) socket.destroy();
			});
			cleanup();
		},
	};
}

function readText(path: string): string {
	try {
		return readFileSync(path, 'utf8');
	} catch {
		return '';
	}
}
