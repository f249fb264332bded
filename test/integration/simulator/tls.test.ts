/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
	connect,
	createServer,
	getCACertificates,
	type ConnectionOptions,
	type Server,
} from 'node:tls';

import { startSimulator, type Simulator } from '../../simulator';
import { issueCertificate } from '../../simulator/tls';
import { caOf, caTrustedByEnvironment, trustOptions } from './helpers';

type Handshake =
	| { ok: true; protocol: string | null; authorized: boolean; peer: X509Certificate | undefined }
	| { ok: false; code: string; message: string };

function handshake(port: number, options: ConnectionOptions): Promise<Handshake> {
	return new Promise((resolve) => {
		const socket = connect({ host: '127.0.0.1', port, servername: 'localhost', ...options }, () => {
			resolve({
				ok: true,
				protocol: socket.getProtocol(),
				authorized: socket.authorized,
				peer: socket.getPeerX509Certificate(),
			});
			socket.end();
		});
		socket.on('error', (error: NodeJS.ErrnoException) =>
			resolve({ ok: false, code: error.code ?? '', message: error.message }),
		);
	});
}

const TLS11_ONLY: ConnectionOptions = {
	minVersion: 'TLSv1.1',
	maxVersion: 'TLSv1.1',
	ciphers: 'DEFAULT@SECLEVEL=0',
};

let sim: Simulator;
let legacyServer: Server;
let legacyPort: number;
let certDir: string;

const portOf = (url: string) => Number(new URL(url).port);

beforeAll(async () => {
	sim = await startSimulator({ invoices: 5, assets: 5 });
	// A server that still speaks TLS 1.1, with a certificate from the same CA: it proves the
	// TLS 1.1 client below can connect at all, so its failure against the simulator is the
	// simulator's refusal.
	certDir = mkdtempSync(join(tmpdir(), 'invoicing-legacy-'));
	const cert = issueCertificate(caOf(sim), certDir, 'legacy');
	legacyServer = createServer(
		{
			key: readFileSync(cert.keyPath),
			cert: readFileSync(cert.certPath),
			minVersion: 'TLSv1',
			ciphers: 'DEFAULT@SECLEVEL=0',
		},
		(socket) => socket.end(),
	);
	await new Promise<void>((resolve) => legacyServer.listen(0, '127.0.0.1', resolve));
	legacyPort = (legacyServer.address() as AddressInfo).port;
});

afterAll(async () => {
	await new Promise((resolve) => legacyServer.close(resolve));
	rmSync(certDir, { recursive: true, force: true });
	await sim.close();
});

describe('TLS versions', () => {
	test('the TLS 1.1 client can connect to a server that allows TLS 1.1', async () => {
		const result = await handshake(legacyPort, { ...trustOptions(sim), ...TLS11_ONLY });
		expect(result).toMatchObject({ ok: true, protocol: 'TLSv1.1', authorized: true });
	});

	test.each([
		['service', () => portOf(sim.serviceUrl)],
		['identity', () => portOf(sim.identityUrl)],
	])('the %s listener refuses TLS 1.1 with a protocol-version error', async (_name, port) => {
		const result = await handshake(port(), { ...trustOptions(sim), ...TLS11_ONLY });
		expect(result.ok).toBe(false);
		expect(result).toMatchObject({ code: 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION' });
	});

	test.each(['TLSv1.2', 'TLSv1.3'] as const)('%s handshakes succeed, verified', async (version) => {
		const result = await handshake(portOf(sim.serviceUrl), {
			...trustOptions(sim),
			minVersion: version,
			maxVersion: version,
		});
		expect(result).toMatchObject({ ok: true, protocol: version, authorized: true });
	});
});

describe('certificates', () => {
	test('the served certificate names localhost, 127.0.0.1 and ::1 and chains to the CA', async () => {
		const result = await handshake(portOf(sim.serviceUrl), trustOptions(sim));
		if (!result.ok) throw new Error(result.message);
		const peer = result.peer as X509Certificate;
		expect(peer.subjectAltName).toBe(
			'DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1',
		);
		const ca = new X509Certificate(readFileSync(sim.caCertPath));
		expect(peer.checkIssued(ca)).toBe(true);
		expect(peer.verify(ca.publicKey)).toBe(true);
		expect(peer.ca).toBe(false);
	});

	test('a client that does not trust the CA is refused: verification is real', async () => {
		// The public roots only, without NODE_EXTRA_CA_CERTS or the simulator's CA.
		const publicRoots = getCACertificates('bundled');
		const result = await handshake(portOf(sim.serviceUrl), { ca: publicRoots });
		expect(result).toMatchObject({ ok: false });
		expect((result as { code: string }).code).toMatch(/CERT|SIGNATURE|ISSUER/);
	});

	const underTestCa = process.env.INVOICING_SIM_CA_DIR ? describe : describe.skip;
	underTestCa('under test/tools/with-test-ca.ts', () => {
		test('the simulator uses the CA of INVOICING_SIM_CA_DIR, trusted via NODE_EXTRA_CA_CERTS', async () => {
			expect(sim.caDir).toBe(process.env.INVOICING_SIM_CA_DIR);
			expect(caTrustedByEnvironment(sim)).toBe(true);
			const result = await handshake(portOf(sim.serviceUrl), {});
			expect(result).toMatchObject({ ok: true, authorized: true });
		});
	});
});
