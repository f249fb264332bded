/**
 * Test certificates made with the system `openssl` CLI: a throw-away certificate authority and
 * leaf certificates it signs (server and client use, subjectAltName with DNS and IP entries).
 * Used for the simulator's HTTPS listeners, the tests' webhook receivers and n8n's own HTTPS.
 * Keys are EC P-256 (fast to generate); private keys are written with mode 0600.
 */
import {
	chmodSync,
	execFileSync,
	existsSync,
	isIP,
	join,
	mkdirSync,
	unlinkSync,
	writeFileSync,
} from '../tools/node-apis';
import { randomBytes } from 'node:crypto';

export interface CertificateFiles {
	certPath: string;
	keyPath: string;
}

export interface CertificateOptions {
	/** Validity in days; 1 unless given. */
	days?: number;
	/** Subject common name. */
	commonName?: string;
	/** For a CA: an openssl nameConstraints value, limiting the names it may sign for. */
	nameConstraints?: string;
}

export const CA_CERT_FILE = 'ca.pem';
export const CA_KEY_FILE = 'ca.key';

export const DEFAULT_HOSTNAMES = ['localhost', '127.0.0.1', '::1'];

/** Creates `<dir>/ca.pem` and `<dir>/ca.key`: a CA (CA:TRUE, keyCertSign) valid for `days`. */
export function createCertificateAuthority(
	dir: string,
	options: CertificateOptions = {},
): CertificateFiles {
	mkdirSync(dir, { recursive: true });
	const files = { certPath: join(dir, CA_CERT_FILE), keyPath: join(dir, CA_KEY_FILE) };
	const config = [
		'[req]',
		'distinguished_name = dn',
		'prompt = no',
		'[dn]',
		`CN = ${options.commonName ?? 'Invoicing Assets Simulator Test CA'}`,
		'[ext]',
		'basicConstraints = critical,CA:TRUE,pathlen:0',
		'keyUsage = critical,keyCertSign,cRLSign',
		'subjectKeyIdentifier = hash',
		...(options.nameConstraints ? [`nameConstraints = ${options.nameConstraints}`] : []),
	];
	runOpenssl(dir, 'ca', config, [], files, options.days ?? 1);
	return files;
}

/** The CA files in `dir` when both exist, else undefined. */
export function findCertificateAuthority(dir: string): CertificateFiles | undefined {
	const files = { certPath: join(dir, CA_CERT_FILE), keyPath: join(dir, CA_KEY_FILE) };
	return existsSync(files.certPath) && existsSync(files.keyPath) ? files : undefined;
}

/** True when the certificate is still valid `seconds` from now. */
export function certificateValidFor(certPath: string, seconds: number): boolean {
	try {
		execFileSync('openssl', ['x509', '-in', certPath, '-noout', '-checkend', String(seconds)], {
			stdio: 'ignore',
		});
		return true;
	} catch {
		return false;
	}
}

/**
 * Issues `<dir>/<name>.pem` and `<dir>/<name>.key` signed by `ca`, for serverAuth and clientAuth,
 * with every hostname as a DNS or IP subjectAltName.
 */
export function issueCertificate(
	ca: CertificateFiles,
	dir: string,
	name: string,
	hostnames: string[] = DEFAULT_HOSTNAMES,
	options: CertificateOptions = {},
): CertificateFiles {
	if (!/^[\w.-]+$/.test(name)) {
		throw new Error(`Certificate name '${name}' may only hold letters, digits, '.', '_' and '-'.`);
	}
	if (hostnames.length === 0) throw new Error('A certificate needs at least one hostname.');
	mkdirSync(dir, { recursive: true });
	const files = { certPath: join(dir, `${name}.pem`), keyPath: join(dir, `${name}.key`) };
	const altNames = hostnames.map((host) => (isIP(host) ? `IP:${host}` : `DNS:${host}`)).join(',');
	const config = [
		'[req]',
		'distinguished_name = dn',
		'prompt = no',
		'[dn]',
		`CN = ${options.commonName ?? hostnames[0]}`,
		'[ext]',
		'basicConstraints = critical,CA:FALSE',
		'keyUsage = critical,digitalSignature',
		'extendedKeyUsage = serverAuth,clientAuth',
		`subjectAltName = ${altNames}`,
		'subjectKeyIdentifier = hash',
		'authorityKeyIdentifier = keyid,issuer',
	];
	runOpenssl(
		dir,
		name,
		config,
		['-CA', ca.certPath, '-CAkey', ca.keyPath],
		files,
		options.days ?? 1,
	);
	return files;
}

function runOpenssl(
	dir: string,
	name: string,
	config: string[],
	signer: string[],
	files: CertificateFiles,
	days: number,
) {
	const configPath = join(dir, `${name}.${randomBytes(4).toString('hex')}.cnf`);
	writeFileSync(configPath, config.join('\n') + '\n');
	try {
		execFileSync(
			'openssl',
			[
				'req',
				'-x509',
				'-new',
				'-newkey',
				'ec',
				'-pkeyopt',
				'ec_paramgen_curve:P-256',
				'-noenc',
				'-keyout',
				files.keyPath,
				'-out',
				files.certPath,
				'-days',
				String(days),
				'-set_serial',
				`0x${randomBytes(16).toString('hex')}`,
				'-config',
				configPath,
				'-extensions',
				'ext',
				...signer,
			],
			{ stdio: ['ignore', 'ignore', 'pipe'] },
		);
	} finally {
		unlinkSync(configPath);
	}
	chmodSync(files.keyPath, 0o600);
}
