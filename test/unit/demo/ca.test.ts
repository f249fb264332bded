/* eslint-disable @n8n/community-nodes/no-restricted-imports */
/* eslint-disable @n8n/community-nodes/no-dangerous-functions -- runs the system openssl CLI with fixed arguments */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { demoCertificateAuthority } from '../../demo/ca';
import {
	findCertificateAuthority,
	issueCertificate,
	type CertificateFiles,
} from '../../simulator/tls';

let dir: string;
let ca: CertificateFiles;

beforeAll(() => {
	dir = mkdtempSync(join(tmpdir(), 'invoicing-demo-ca-'));
	demoCertificateAuthority(dir);
	ca = findCertificateAuthority(dir) as CertificateFiles;
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function verifies(name: string, hostnames: string[]): boolean {
	const leaf = issueCertificate(ca, dir, name, hostnames);
	try {
		execFileSync('openssl', ['verify', '-CAfile', ca.certPath, leaf.certPath], { stdio: 'pipe' });
		return true;
	} catch {
		return false;
	}
}

test('the demo CA vouches for localhost, 127.0.0.1 and ::1 only', () => {
	expect(verifies('local', ['localhost', '127.0.0.1', '::1'])).toBe(true);
	expect(verifies('other-name', ['example.com'])).toBe(false);
	expect(verifies('other-address', ['10.0.0.1'])).toBe(false);
});

test('the demo CA is kept across runs while it is valid', () => {
	const before = execFileSync('openssl', ['x509', '-in', ca.certPath, '-noout', '-serial'], {
		encoding: 'utf8',
	});
	demoCertificateAuthority(dir);
	const after = execFileSync('openssl', ['x509', '-in', ca.certPath, '-noout', '-serial'], {
		encoding: 'utf8',
	});
	expect(after).toBe(before);
});
