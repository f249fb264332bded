/* eslint-disable @n8n/community-nodes/no-restricted-imports */
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
	certificateValidFor,
	createCertificateAuthority,
	findCertificateAuthority,
	issueCertificate,
} from '../../simulator/tls';

const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

let dir: string;

beforeAll(() => {
	dir = mkdtempSync(join(tmpdir(), 'invoicing-tls-unit-'));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('createCertificateAuthority makes a CA valid for a day, key private', () => {
	const ca = createCertificateAuthority(join(dir, 'ca'));
	const cert = new X509Certificate(readFileSync(ca.certPath));
	expect(cert.ca).toBe(true);
	expect(cert.checkIssued(cert)).toBe(true);
	const lifetime = Date.parse(cert.validTo) - Date.parse(cert.validFrom);
	expect(lifetime).toBe(24 * 60 * 60 * 1000);
	expect(statSync(ca.keyPath).mode & 0o777).toBe(0o600);
	expect(findCertificateAuthority(join(dir, 'ca'))).toEqual(ca);
	expect(findCertificateAuthority(join(dir, 'nothing'))).toBeUndefined();
	expect(certificateValidFor(ca.certPath, 60)).toBe(true);
	expect(certificateValidFor(ca.certPath, 2 * 24 * 60 * 60)).toBe(false);
});

test('issueCertificate signs a server and client certificate with DNS and IP names', () => {
	const ca = createCertificateAuthority(join(dir, 'ca2'), { days: 3 });
	const issued = issueCertificate(ca, join(dir, 'leaf'), 'n8n', [
		'n8n.local',
		'localhost',
		'10.1.2.3',
		'::1',
	]);
	const cert = new X509Certificate(readFileSync(issued.certPath));
	const caCert = new X509Certificate(readFileSync(ca.certPath));
	expect(cert.ca).toBe(false);
	expect(cert.subject).toBe('CN=n8n.local');
	expect(cert.subjectAltName).toBe(
		'DNS:n8n.local, DNS:localhost, IP Address:10.1.2.3, IP Address:0:0:0:0:0:0:0:1',
	);
	expect(cert.keyUsage).toEqual(expect.arrayContaining([SERVER_AUTH, CLIENT_AUTH]));
	expect(cert.checkIssued(caCert)).toBe(true);
	expect(cert.verify(caCert.publicKey)).toBe(true);
	expect(cert.checkHost('localhost')).toBe('localhost');
	expect(cert.checkIP('10.1.2.3')).toBe('10.1.2.3');
	expect(cert.checkHost('example.com')).toBeUndefined();
	expect(issued.keyPath).toBe(join(dir, 'leaf', 'n8n.key'));
});

test('issueCertificate refuses odd names and no hostnames', () => {
	const ca = createCertificateAuthority(join(dir, 'ca3'));
	expect(() => issueCertificate(ca, dir, '../evil')).toThrow(/letters/);
	expect(() => issueCertificate(ca, dir, 'x', [])).toThrow(/hostname/);
});
