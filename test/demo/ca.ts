/* eslint-disable @n8n/community-nodes/no-restricted-imports */
/* eslint-disable @n8n/community-nodes/no-dangerous-functions -- demo tooling: runs the system openssl CLI with fixed arguments */
/**
 * The demo's certificate authority, kept in .tmp/demo/ca/ across runs so that a browser told to
 * trust it once keeps trusting it. Unlike the tests' throw-away CA it carries critical name
 * constraints: it can only vouch for localhost, 127.0.0.1 and ::1, so trusting it in a browser
 * cannot let its key (a file on disk) impersonate any other site. The leaf certificates come from
 * test/simulator/tls.ts (issueCertificate), for exactly those names.
 */
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';

import {
	certificateValidFor,
	createCertificateAuthority,
	findCertificateAuthority,
} from '../simulator/tls';

/** What the demo CA may sign for: the simulator's and n8n's certificates name exactly these. */
export const DEMO_NAME_CONSTRAINTS =
	'critical,permitted;DNS:localhost,permitted;IP:127.0.0.1/255.255.255.255,permitted;IP:::1/ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff';

/** True when the CA certificate carries the demo's name constraints. */
function isConstrained(certPath: string): boolean {
	try {
		const text = execFileSync(
			'openssl',
			['x509', '-in', certPath, '-noout', '-ext', 'nameConstraints'],
			{
				encoding: 'utf8',
				stdio: ['ignore', 'pipe', 'ignore'],
			},
		);
		return /DNS:localhost/.test(text) && /IP:127\.0\.0\.1/.test(text);
	} catch {
		return false;
	}
}

/**
 * The demo CA in `dir`: reused while valid for another day and name-constrained, else made anew
 * (a browser that trusted the old one must then be told to trust the new one).
 */
export function demoCertificateAuthority(dir: string): string {
	const existing = findCertificateAuthority(dir);
	if (
		existing &&
		certificateValidFor(existing.certPath, 24 * 3600) &&
		isConstrained(existing.certPath)
	) {
		return dir;
	}
	rmSync(dir, { recursive: true, force: true });
	createCertificateAuthority(dir, {
		days: 365,
		commonName: 'Invoicing & Assets demo CA (localhost only)',
		nameConstraints: DEMO_NAME_CONSTRAINTS,
	});
	return dir;
}
