/**
 * Starts the provider simulator stand-alone (`npm run simulator -- [options]`); see USAGE.
 * A default port that is taken is replaced by a free one. The demo credential (client ID and
 * secret) is kept in the CA folder so that it survives restarts. Ctrl-C closes cleanly.
 */
import {
	existsSync,
	join,
	clearInterval,
	process,
	REPOSITORY_ROOT,
	readFileSync,
	resolve,
	setInterval,
	writeFileSync,
} from '../tools/node-apis';

import { startSimulator, type ClientRecord, type Simulator } from './index';
import { certificateValidFor, createCertificateAuthority, findCertificateAuthority } from './tls';

const USAGE = `Usage: npm run simulator -- [options]

  --identity-port N   identity service port (env INVOICING_SIM_IDENTITY_PORT, default 47443)
  --service-port N    service API port (env INVOICING_SIM_SERVICE_PORT, default 47444)
  --control-port N    control API port (env INVOICING_SIM_CONTROL_PORT, default 47480)
  --invoices N        seeded invoices (env INVOICING_SIM_INVOICES, default 1050)
  --assets N          seeded managed assets (env INVOICING_SIM_ASSETS, default 300)
  --seed S            data seed (env INVOICING_SIM_SEED)
  --ca-dir DIR        CA folder (env INVOICING_SIM_CA_DIR, default .tmp/simulator-ca in the
                      repository); a CA valid 30 days is created there and reused
  --issue-every S     issue a new invoice, with its invoice.issued event, every S seconds
                      (env INVOICING_SIM_ISSUE_EVERY)
`;

const DEFAULT_PORTS = { identity: 47443, service: 47444, control: 47480 };
const CA_DAYS = 30;
const DAY_SECONDS = 24 * 60 * 60;

interface CliOptions {
	identityPort: number;
	servicePort: number;
	controlPort: number;
	invoices?: number;
	assets?: number;
	seed?: string;
	caDir: string;
	caDirExplicit: boolean;
	issueEverySeconds?: number;
}

function readOptions(argv: string[]): CliOptions | undefined {
	const flags = new Map<string, string>();
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		if (arg === '--help' || arg === '-h') return undefined;
		if (!arg.startsWith('--')) return fail(`Unexpected argument '${arg}'.`);
		const [name, inline] = arg.slice(2).split('=', 2);
		const value = inline ?? argv[++i];
		if (value === undefined) return fail(`--${name} needs a value.`);
		flags.set(name, value);
	}
	const known = [
		'identity-port',
		'service-port',
		'control-port',
		'invoices',
		'assets',
		'seed',
		'ca-dir',
		'issue-every',
	];
	for (const name of flags.keys()) {
		if (!known.includes(name)) return fail(`Unknown option --${name}.`);
	}
	const pick = (flag: string, env: string) => flags.get(flag) ?? process.env[env];
	const number = (flag: string, env: string, fallback?: number) => {
		const text = pick(flag, env);
		if (text === undefined || text === '') return fallback;
		const value = Number(text);
		if (!Number.isFinite(value) || value < 0) fail(`--${flag} must be a number; got '${text}'.`);
		return value;
	};
	return {
		identityPort: number(
			'identity-port',
			'INVOICING_SIM_IDENTITY_PORT',
			DEFAULT_PORTS.identity,
		) as number,
		servicePort: number(
			'service-port',
			'INVOICING_SIM_SERVICE_PORT',
			DEFAULT_PORTS.service,
		) as number,
		controlPort: number(
			'control-port',
			'INVOICING_SIM_CONTROL_PORT',
			DEFAULT_PORTS.control,
		) as number,
		invoices: number('invoices', 'INVOICING_SIM_INVOICES'),
		assets: number('assets', 'INVOICING_SIM_ASSETS'),
		seed: pick('seed', 'INVOICING_SIM_SEED'),
		caDir: resolve(
			pick('ca-dir', 'INVOICING_SIM_CA_DIR') ?? join(REPOSITORY_ROOT, '.tmp', 'simulator-ca'),
		),
		caDirExplicit: pick('ca-dir', 'INVOICING_SIM_CA_DIR') !== undefined,
		issueEverySeconds: number('issue-every', 'INVOICING_SIM_ISSUE_EVERY'),
	};
}

function fail(message: string): never {
	process.stderr.write(`simulator: ${message}\nRun with --help for the options.\n`);
	process.exit(2);
}

/**
 * The CA folder's CA, created when missing. Only the default folder's CA is renewed (when it ends
 * within a day): a folder given explicitly may hold a CA that other processes already trust.
 */
function ensureCa(caDir: string, explicit: boolean) {
	const existing = findCertificateAuthority(caDir);
	if (existing && (explicit || certificateValidFor(existing.certPath, DAY_SECONDS))) {
		if (!certificateValidFor(existing.certPath, 0)) fail(`The CA in ${caDir} has expired.`);
		return existing;
	}
	return createCertificateAuthority(caDir, { days: CA_DAYS });
}

/** The demo client ID and secret, kept in the CA folder across restarts. */
function demoCredential(caDir: string): { clientId?: string; clientSecret?: string } {
	const file = join(caDir, 'demo-client.json');
	if (!existsSync(file)) return {};
	try {
		const saved = JSON.parse(readFileSync(file, 'utf8')) as {
			clientId?: unknown;
			clientSecret?: unknown;
		};
		if (typeof saved.clientId === 'string' && typeof saved.clientSecret === 'string') {
			return { clientId: saved.clientId, clientSecret: saved.clientSecret };
		}
	} catch {
		return {};
	}
	return {};
}

function saveDemoCredential(caDir: string, client: ClientRecord) {
	const file = join(caDir, 'demo-client.json');
	writeFileSync(
		file,
		JSON.stringify({ clientId: client.clientId, clientSecret: client.clientSecret }) + '\n',
		{
			mode: 0o600,
		},
	);
}

function banner(sim: Simulator): string {
	const credential = (client: ClientRecord, baseUrl: string) =>
		[
			`    Environment:           ${client.environment}`,
			`    Base URL:              ${baseUrl}`,
			`    Identity Service URL:  ${sim.identityUrl}`,
			`    Scope:                 ${client.scope}`,
			`    Client ID:             ${client.clientId}`,
			`    Client Secret:         ${client.clientSecret}`,
			`    API Key Expires On:    ${client.keyExpiresAt.toISOString().slice(0, 10)}`,
		].join('\n');
	return [
		'Invoicing & Assets provider simulator',
		'',
		`  Identity service:  ${sim.identityUrl}  (token endpoint ${sim.tokenUrl})`,
		`  Service API:       ${sim.serviceUrl}  (sandbox: ${sim.sandboxServiceUrl})`,
		`  Control API:       ${sim.controlUrl}/control/state`,
		'',
		`  CA certificate:    ${sim.caCertPath}`,
		'  Trust it in every Node process that calls the simulator or receives its deliveries',
		'  (n8n included), before that process starts:',
		`    export NODE_EXTRA_CA_CERTS=${sim.caCertPath}`,
		...(process.env.NODE_EXTRA_CA_CERTS
			? [
					`  NODE_EXTRA_CA_CERTS is already set here (${process.env.NODE_EXTRA_CA_CERTS}); to keep`,
					'  trusting it, point the variable at a bundle of both files instead:',
					`    cat "${process.env.NODE_EXTRA_CA_CERTS}" "${sim.caCertPath}" > simulator-trust.pem`,
				]
			: []),
		'',
		'  Credential "Invoicing & Assets API" (local simulator values, safe to paste):',
		credential(sim.defaultClient, sim.serviceUrl),
		'',
		'  Sandbox credential:',
		credential(sim.defaultSandboxClient, sim.sandboxServiceUrl),
		'',
		'  Webhook receivers must be https with a certificate the simulator trusts (its own CA or',
		'  one in NODE_EXTRA_CA_CERTS). Press Ctrl-C to stop.',
		'',
	].join('\n');
}

async function main() {
	const options = readOptions(process.argv.slice(2));
	if (!options) {
		process.stdout.write(USAGE);
		return;
	}
	ensureCa(options.caDir, options.caDirExplicit);
	const saved = demoCredential(options.caDir);
	const sim = await startSimulator({
		caDir: options.caDir,
		ports: {
			identity: options.identityPort,
			service: options.servicePort,
			control: options.controlPort,
		},
		fallbackToFreePorts: true,
		invoices: options.invoices,
		assets: options.assets,
		seed: options.seed,
		defaultClient: { ...saved, displayName: 'Simulator demo key' },
	});
	saveDemoCredential(options.caDir, sim.defaultClient);
	process.stdout.write(banner(sim));

	let timer: ReturnType<typeof setInterval> | undefined;
	if (options.issueEverySeconds) {
		timer = setInterval(() => {
			const { invoice, event } = sim.issueInvoice();
			process.stdout.write(
				`${invoice.issueDate} issued ${invoice.invoiceNumber} (${invoice.customerNumber}, ${invoice.totalAmount} ${invoice.currency}); event ${event.eventId} to ${event.deliveries.length} subscription(s)\n`,
			);
			void event.done.then((outcomes) => {
				for (const outcome of outcomes) {
					process.stdout.write(
						`  delivery ${outcome.eventId} -> ${outcome.subscriptionId}: ${outcome.result} after ${outcome.attempts} attempt(s)${outcome.lastStatus ? ` (HTTP ${outcome.lastStatus})` : ''}${outcome.lastError ? ` (${outcome.lastError})` : ''}\n`,
					);
				}
			});
		}, options.issueEverySeconds * 1000);
	}

	let stopping = false;
	const stop = () => {
		if (stopping) return;
		stopping = true;
		if (timer) clearInterval(timer);
		process.stdout.write('\nStopping the simulator...\n');
		void sim.close().then(() => process.exit(0));
	};
	process.on('SIGINT', stop);
	process.on('SIGTERM', stop);
}

main().catch((error: unknown) => {
	process.stderr.write(`simulator: ${error instanceof Error ? error.message : String(error)}\n`);
	process.exit(1);
});
