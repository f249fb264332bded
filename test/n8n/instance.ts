/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/* eslint-disable @n8n/community-nodes/no-dangerous-functions -- test tooling: starts n8n processes */
/**
 * One real n8n process (plus the task runner it spawns), configured entirely through its
 * environment: owner managed by env, quiet and offline, HTTPS with a certificate from the test
 * CA, free ports chosen at run time. Stopped by its own process group, never by name.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
	closeSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	openSync,
	readFileSync,
	readdirSync,
	rmSync,
	writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';

import { findCertificateAuthority, issueCertificate } from '../simulator/tls';
import { copyArtifacts, exportArtifacts } from './artifacts';
import { CURRENT_N8N, ensureN8n, type N8nInstallation, type N8nRelease } from './install';
import { installMinimalTrigger } from './minimal-trigger';
import { installPackage } from './package';
import { freePort } from './ports';
import { onShutdown } from './shutdown';

export { freePort };

export const API_KEY_SCOPES = [
	'credential:create',
	'credential:read',
	'credential:update',
	'credential:delete',
	'credential:list',
	'workflow:create',
	'workflow:read',
	'workflow:update',
	'workflow:delete',
	'workflow:list',
	'workflow:activate',
	'workflow:deactivate',
	'execution:list',
	'execution:read',
];

export interface N8nOptions {
	name: string;
	/** The n8n release to run (test/n8n/install.ts); today's pin unless given. */
	release?: N8nRelease;
	/** Serve HTTPS with a certificate from the CA in `caDir` (the default); plain http otherwise. */
	https?: boolean;
	/** Folder of the test CA (ca.pem, ca.key); INVOICING_SIM_CA_DIR unless given. */
	caDir?: string;
	/** Reuse this folder as N8N_USER_FOLDER (e.g. the demo's), else a fresh temporary one. */
	userFolder?: string;
	port?: number;
	owner?: { email: string; password: string };
	env?: Record<string, string>;
	/**
	 * The n8n command: `start` (the default), or in queue mode `worker` (its health server,
	 * plain http on 127.0.0.1:`port`, tells readiness) or `webhook` (serves production webhooks
	 * on `port`).
	 */
	command?: 'start' | 'worker' | 'webhook';
	/** Extra command-line arguments, e.g. `--concurrency=5` for a worker. */
	args?: string[];
	/** N8N_ENCRYPTION_KEY: random per instance unless given (queue mode: the same on every process). */
	encryptionKey?: string;
	/**
	 * Also install the test tree's minimal community trigger (test/n8n/minimal-trigger.ts), a
	 * second community package beside ours: the reliability run's delivery-latency floor.
	 */
	minimalTrigger?: boolean;
}

export interface HttpAnswer<T = unknown> {
	status: number;
	body: T;
	text: string;
}

export class N8nInstance {
	readonly installation: N8nInstallation;

	readonly userFolder: string;

	readonly owner: { email: string; password: string };

	readonly https: boolean;

	port = 0;

	private brokerPort = 0;

	private child?: ChildProcess;

	private cookie?: string;

	private apiKey?: string;

	private readonly encryptionKey: string;

	private readonly ownsUserFolder: boolean;

	private certificate?: { certPath: string; keyPath: string; caPath: string };

	/** Certificates n8n trusts for its outbound calls: what this process trusts, plus the test CA. */
	private trustBundle?: string;

	/** Talks to this n8n trusting the test CA explicitly, so callers need no NODE_EXTRA_CA_CERTS. */
	private dispatcher?: Agent;

	private extraEnv: Record<string, string>;

	/** Unregisters this instance from the interrupt cleanup (test/n8n/shutdown.ts). */
	private readonly forgetOnShutdown: () => void;

	constructor(private readonly options: N8nOptions) {
		this.installation = ensureN8n(options.release ?? CURRENT_N8N);
		this.https = options.https ?? true;
		this.ownsUserFolder = options.userFolder === undefined;
		this.userFolder = options.userFolder ?? mkdtempSync(join(tmpdir(), `n8n-${options.name}-`));
		if (this.ownsUserFolder) liveFolders.add(this.userFolder);
		// Interrupted (Ctrl-C in an entry script that handles signals): stop it, remove its folder.
		this.forgetOnShutdown = onShutdown(async () => await this.stopAndRemove());
		this.owner = options.owner ?? {
			email: `owner@${options.name}.test`,
			password: `Aa1-${randomBytes(12).toString('hex')}`,
		};
		this.extraEnv = { ...(options.env ?? {}) };
		this.encryptionKey = options.encryptionKey ?? randomBytes(24).toString('hex');
		mkdirSync(join(this.userFolder, 'tmp'), { recursive: true });
		installPackage(this.userFolder);
		if (options.minimalTrigger) installMinimalTrigger(this.userFolder);
		const ca = findCertificateAuthority(options.caDir ?? process.env.INVOICING_SIM_CA_DIR ?? '');
		if (ca) {
			const inherited = process.env.NODE_EXTRA_CA_CERTS;
			const extra = inherited && existsSync(inherited) ? readFileSync(inherited, 'utf8') : '';
			this.trustBundle = join(this.userFolder, 'tls', 'trusted.pem');
			mkdirSync(dirname(this.trustBundle), { recursive: true });
			writeFileSync(this.trustBundle, `${extra}\n${readFileSync(ca.certPath, 'utf8')}`);
		}
		if (this.https) {
			if (!ca) throw new Error('HTTPS n8n needs the test CA: run under test/tools/with-test-ca.ts');
			const files = issueCertificate(ca, join(this.userFolder, 'tls'), 'n8n');
			this.certificate = { ...files, caPath: ca.certPath };
			this.dispatcher = new Agent({ connect: { ca: readFileSync(ca.certPath) } });
		}
	}

	get url(): string {
		if (this.options.command === 'worker') return `http://127.0.0.1:${this.port}`;
		return `${this.https ? 'https' : 'http'}://localhost:${this.port}`;
	}

	/** `start` (the main: editor, API), `worker` or `webhook`. */
	get command(): 'start' | 'worker' | 'webhook' {
		return this.options.command ?? 'start';
	}

	/** The process-group id of the running n8n (its pid), if started. */
	get pid(): number | undefined {
		return this.child?.pid;
	}

	get logPath(): string {
		return join(this.userFolder, 'n8n.log');
	}

	log(): string {
		try {
			return readFileSync(this.logPath, 'utf8');
		} catch {
			return '';
		}
	}

	/** Changes the environment of the next start (e.g. legacy publication mode). */
	setEnv(env: Record<string, string | undefined>) {
		for (const [key, value] of Object.entries(env)) {
			if (value === undefined) delete this.extraEnv[key];
			else this.extraEnv[key] = value;
		}
	}

	async start(): Promise<void> {
		this.port ||= this.options.port ?? (await freePort());
		this.brokerPort ||= await freePort();
		const bcrypt = createRequire(join(this.installation.home, 'node_modules/n8n/package.json'))(
			'bcryptjs',
		) as { hashSync(password: string, rounds: number): string };
		const release = this.installation.release;
		const env: Record<string, string> = {
			PATH: `${dirname(this.installation.node)}:${process.env.PATH ?? ''}`,
			HOME: process.env.HOME ?? this.userFolder,
			TMPDIR: join(this.userFolder, 'tmp'),
			N8N_USER_FOLDER: this.userFolder,
			N8N_PORT: String(this.port),
			N8N_LISTEN_ADDRESS: '127.0.0.1',
			N8N_HOST: 'localhost',
			N8N_RUNNERS_BROKER_PORT: String(this.brokerPort),
			N8N_ENCRYPTION_KEY: this.encryptionKey,
			...(release.ownerFromEnv
				? {
						N8N_INSTANCE_OWNER_MANAGED_BY_ENV: 'true',
						N8N_INSTANCE_OWNER_EMAIL: this.owner.email,
						N8N_INSTANCE_OWNER_PASSWORD_HASH: bcrypt.hashSync(this.owner.password, 10),
					}
				: {}),
			N8N_DIAGNOSTICS_ENABLED: 'false',
			N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
			...(release.disabledModules ? { N8N_DISABLED_MODULES: release.disabledModules } : {}),
			N8N_TEMPLATES_ENABLED: 'false',
			N8N_PERSONALIZATION_ENABLED: 'false',
			N8N_HIRING_BANNER_ENABLED: 'false',
			N8N_DYNAMIC_BANNERS_ENABLED: 'false',
			N8N_VERIFIED_PACKAGES_ENABLED: 'false',
			N8N_UNVERIFIED_PACKAGES_ENABLED: 'true',
			N8N_AI_ENABLED: 'false',
			N8N_LOG_LEVEL: 'info',
			NODE_EXTRA_CA_CERTS: this.trustBundle ?? process.env.NODE_EXTRA_CA_CERTS ?? '',
			...(this.certificate
				? {
						N8N_PROTOCOL: 'https',
						N8N_SSL_KEY: this.certificate.keyPath,
						N8N_SSL_CERT: this.certificate.certPath,
					}
				: { N8N_SECURE_COOKIE: 'false' }),
			...(this.options.command === 'worker'
				? {
						QUEUE_HEALTH_CHECK_ACTIVE: 'true',
						QUEUE_HEALTH_CHECK_PORT: String(this.port),
						N8N_WORKER_SERVER_ADDRESS: '127.0.0.1',
					}
				: {}),
			...this.extraEnv,
		};
		const logFile = openSync(this.logPath, 'a');
		const command = [this.options.command ?? 'start', ...(this.options.args ?? [])];
		this.child = spawn(this.installation.node, [this.installation.bin, ...command], {
			env,
			detached: true,
			stdio: ['ignore', logFile, logFile],
		});
		closeSync(logFile);
		if (this.child.pid) liveGroups.add(this.child.pid);
		this.cookie = undefined;
		await this.waitUntilReady();
		if (!release.ownerFromEnv) await this.setUpOwner();
	}

	/** Releases without an env-managed owner: the first start's setup, as the editor's setup page sends it. */
	private async setUpOwner() {
		// Readiness comes before the REST routes are mounted on these releases: wait for them.
		const deadline = Date.now() + 60_000;
		let setup = await this.ownerSetup();
		while (setup.status === 404 && Date.now() < deadline) {
			await sleep(250);
			setup = await this.ownerSetup();
		}
		// 400 on a restart: the owner was set up on the first start.
		if (setup.status !== 200 && !(setup.status === 400 && /already/i.test(setup.text))) {
			throw new Error(`owner setup: ${setup.status} ${setup.text.slice(0, 300)}`);
		}
		this.cookie = undefined;
	}

	private async ownerSetup(): Promise<HttpAnswer> {
		return await this.http('POST', '/rest/owner/setup', {
			body: {
				email: this.owner.email,
				firstName: 'Test',
				lastName: 'Owner',
				password: this.owner.password,
			},
		});
	}

	/** Turns the workflow's triggers on: "publish" on today's n8n, "activate" on 1.x and early 2.x. */
	async activate(workflowId: string): Promise<HttpAnswer> {
		return await this.api(
			'POST',
			`/workflows/${workflowId}/${this.installation.release.activation.on}`,
		);
	}

	/** Turns the workflow's triggers off: "unpublish", or "deactivate" on 1.x and early 2.x. */
	async deactivate(workflowId: string): Promise<HttpAnswer> {
		return await this.api(
			'POST',
			`/workflows/${workflowId}/${this.installation.release.activation.off}`,
		);
	}

	/**
	 * Tests a saved credential as the editor's "Retry"/save does: through the public API where it
	 * has `/credentials/{id}/test`, else through the editor's `/rest/credentials/test` with the
	 * credential's data.
	 */
	async testCredential(credential: {
		id: string;
		name: string;
		type: string;
		data: Record<string, unknown>;
	}): Promise<HttpAnswer<{ status: string; message: string }>> {
		if (this.installation.release.publicCredentialTest) {
			return await this.api('POST', `/credentials/${credential.id}/test`);
		}
		const answer = await this.rest<{ data: { status: string; message: string } }>(
			'POST',
			'/credentials/test',
			{ credentials: credential },
		);
		return { status: answer.status, body: answer.body.data, text: answer.text };
	}

	private async waitUntilReady(timeoutMs = 120_000) {
		const deadline = Date.now() + timeoutMs;
		while (Date.now() < deadline) {
			if (this.child?.exitCode !== null && this.child?.exitCode !== undefined) {
				throw new Error(
					`n8n "${this.options.name}" exited early (code ${this.child.exitCode}):\n${this.log().slice(-3000)}`,
				);
			}
			const answer = await this.http('GET', '/healthz/readiness').catch(() => undefined);
			if (answer?.status === 200) return;
			await sleep(150);
		}
		throw new Error(
			`n8n "${this.options.name}" was not ready within ${timeoutMs / 1000} s:\n${this.log().slice(-3000)}`,
		);
	}

	/** Stops n8n and its task runner: SIGTERM to the process group, SIGKILL after 20 s. */
	async stop(): Promise<void> {
		const pid = this.child?.pid;
		if (!pid) return;
		this.child = undefined;
		signalGroup(pid, 'SIGTERM');
		const deadline = Date.now() + 20_000;
		while (groupMembers(pid).length > 0) {
			if (Date.now() > deadline) {
				signalGroup(pid, 'SIGKILL');
				await sleep(200);
				break;
			}
			await sleep(100);
		}
		liveGroups.delete(pid);
	}

	async restart(): Promise<void> {
		await this.stop();
		await this.start();
	}

	/** Stops n8n and removes its folder (when this instance created it). */
	async dispose(): Promise<void> {
		const artifacts = await exportArtifacts(this, this.options.name);
		await this.stop();
		copyArtifacts(this, artifacts);
		await this.stopAndRemove();
	}

	private async stopAndRemove(): Promise<void> {
		this.forgetOnShutdown();
		await this.stop();
		await this.dispatcher?.close().catch(() => undefined);
		if (this.ownsUserFolder) {
			rmSync(this.userFolder, { recursive: true, force: true });
			liveFolders.delete(this.userFolder);
		}
	}

	async http<T = unknown>(
		method: string,
		path: string,
		options: { body?: unknown; headers?: Record<string, string>; rawBody?: string } = {},
	): Promise<HttpAnswer<T>> {
		const headers: Record<string, string> = { ...(options.headers ?? {}) };
		let body: string | undefined = options.rawBody;
		if (options.body !== undefined) {
			body = JSON.stringify(options.body);
			headers['content-type'] = 'application/json';
		}
		const response = await request(`${this.url}${path}`, {
			method: method as 'GET',
			headers,
			body,
			headersTimeout: 60_000,
			bodyTimeout: 60_000,
			dispatcher: this.dispatcher,
		});
		const text = await response.body.text();
		let parsed: unknown = text;
		try {
			parsed = JSON.parse(text);
		} catch {
			// not JSON: keep the text
		}
		const setCookie = response.headers['set-cookie'];
		const cookies = Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : [];
		const auth = cookies.find((cookie) => cookie.startsWith('n8n-auth='));
		if (auth) this.cookie = auth.split(';')[0];
		return { status: response.statusCode, body: parsed as T, text };
	}

	/** The internal REST API, as the owner signed in to the editor. */
	async rest<T = unknown>(method: string, path: string, body?: unknown): Promise<HttpAnswer<T>> {
		return await this.signedIn<T>(method, `/rest${path}`, body);
	}

	/** Any editor path (e.g. `/types/nodes.json`) with the owner's session cookie. */
	async signedIn<T = unknown>(
		method: string,
		path: string,
		body?: unknown,
	): Promise<HttpAnswer<T>> {
		if (!this.cookie) {
			const login = await this.http('POST', '/rest/login', {
				body: { emailOrLdapLoginId: this.owner.email, password: this.owner.password },
			});
			if (login.status !== 200 || !this.cookie)
				throw new Error(`login failed: ${login.status} ${login.text}`);
		}
		return await this.http<T>(method, path, { body, headers: { cookie: this.cookie ?? '' } });
	}

	/** The public API (`/api/v1`), with an API key created for the owner. */
	async api<T = unknown>(method: string, path: string, body?: unknown): Promise<HttpAnswer<T>> {
		if (!this.apiKey) {
			// Each release offers its own scopes (1.x has no credential:read/update/list): ask for ours it has.
			const offered = await this.rest<{ data: string[] }>('GET', '/api-keys/scopes');
			const scopes =
				offered.status === 200 && Array.isArray(offered.body.data)
					? API_KEY_SCOPES.filter((scope) => offered.body.data.includes(scope))
					: API_KEY_SCOPES;
			const created = await this.rest<{ data: { rawApiKey: string } }>('POST', '/api-keys', {
				label: `tests ${Date.now()}`,
				scopes,
				expiresAt: null,
			});
			if (created.status !== 200) throw new Error(`API key: ${created.status} ${created.text}`);
			this.apiKey = created.body.data.rawApiKey;
		}
		return await this.http<T>(method, `/api/v1${path}`, {
			body,
			headers: { 'x-n8n-api-key': this.apiKey },
		});
	}
}

const liveGroups = new Set<number>();
/** User folders of instances not disposed yet; removed at exit if a run ends without disposing. */
const liveFolders = new Set<string>();
process.once('exit', () => {
	for (const pid of liveGroups) signalGroup(pid, 'SIGKILL');
	for (const folder of liveFolders) rmSync(folder, { recursive: true, force: true });
});

function signalGroup(pid: number, signal: NodeJS.Signals) {
	try {
		process.kill(-pid, signal);
	} catch {
		// the group is already gone
	}
}

/** PIDs of live processes in the process group `pgid` (from /proc). */
export function groupMembers(pgid: number): number[] {
	const members: number[] = [];
	for (const entry of readdirSync('/proc')) {
		if (!/^\d+$/.test(entry)) continue;
		try {
			const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
			const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
			if (Number(fields[2]) === pgid && fields[0] !== 'Z') members.push(Number(entry));
		} catch {
			// the process ended while we looked
		}
	}
	return members;
}
