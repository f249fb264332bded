/* eslint-disable @n8n/community-nodes/no-restricted-imports */
/**
 * n8n in queue mode on this machine: Redis and PostgreSQL (services.ts), one main process
 * (editor, API, trigger registration; production webhooks switched off), workers that run the
 * executions, and webhook processes that answer the deliveries. Every process has its own user
 * folder with the packed package installed by hand (N8N_COMMUNITY_PACKAGES installs only from the
 * npm registry: docs/queue-mode.md#by-hand), and they share the encryption key, the owner, the
 * database and Redis. Stopped by process group; folders removed on dispose.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';

import { freePort, groupMembers, N8nInstance } from '../n8n/instance';
import {
	cleaningUpOnFailure,
	ensureQueueServices,
	startPostgres,
	startRedis,
	type RunningPostgres,
	type RunningService,
} from './services';

export interface QueueClusterOptions {
	workers?: number;
	/** Jobs one worker runs at once (`n8n worker --concurrency`); n8n's default is 10. */
	concurrency?: number;
}

/** Every pid and folder the cluster created, to check that nothing is left after dispose. */
export interface Footprint {
	pids: number[];
	folders: string[];
}

export class QueueCluster {
	readonly encryptionKey = randomBytes(24).toString('hex');

	readonly owner = {
		email: 'owner@queue.test',
		password: `Aa1-${randomBytes(12).toString('hex')}`,
	};

	main!: N8nInstance;

	readonly workers: N8nInstance[] = [];

	readonly webhooks: N8nInstance[] = [];

	postgres?: RunningPostgres;

	redis?: RunningService;

	/** The port of the first webhook process, which N8N_WEBHOOK_URL names. */
	webhookPort = 0;

	private readonly footprint: Footprint = { pids: [], folders: [] };

	private constructor(private readonly options: QueueClusterOptions) {}

	/** Starts Redis, PostgreSQL, the main process, then the workers and one webhook process. */
	static async start(options: QueueClusterOptions = {}): Promise<QueueCluster> {
		const cluster = new QueueCluster(options);
		await cleaningUpOnFailure(
			async () => await cluster.boot(),
			async () => await cluster.dispose(),
		);
		return cluster;
	}

	/** N8N_WEBHOOK_URL: the public base URL of production webhooks, i.e. the webhook process. */
	get webhookUrl(): string {
		return `https://localhost:${this.webhookPort}/`;
	}

	/** The environment every process shares (besides the per-process block of N8nInstance). */
	sharedEnv(): Record<string, string> {
		if (!this.postgres || !this.redis) throw new Error('services not started');
		return {
			EXECUTIONS_MODE: 'queue',
			QUEUE_BULL_REDIS_HOST: '127.0.0.1',
			QUEUE_BULL_REDIS_PORT: String(this.redis.port),
			DB_TYPE: 'postgresdb',
			DB_POSTGRESDB_HOST: '127.0.0.1',
			DB_POSTGRESDB_PORT: String(this.postgres.port),
			DB_POSTGRESDB_DATABASE: this.postgres.database,
			DB_POSTGRESDB_USER: this.postgres.user,
			DB_POSTGRESDB_PASSWORD: 'unused-trust-auth',
			N8N_WEBHOOK_URL: this.webhookUrl,
		};
	}

	private async boot() {
		const binaries = ensureQueueServices();
		[this.postgres, this.redis] = await Promise.all([
			startPostgres(binaries.postgres),
			startRedis(binaries.redis),
		]);
		this.footprint.pids.push(this.postgres.pid, this.redis.pid);
		this.footprint.folders.push(this.postgres.folder, this.redis.folder);
		this.webhookPort = await freePort();

		// The main process first: it creates the schema that the others then use.
		this.main = this.track(
			new N8nInstance({
				name: 'queue-main',
				owner: this.owner,
				encryptionKey: this.encryptionKey,
				env: {
					...this.sharedEnv(),
					// Deliveries go to the webhook process only; the main answers 404 on /webhook/.
					N8N_DISABLE_PRODUCTION_MAIN_PROCESS: 'true',
					OFFLOAD_MANUAL_EXECUTIONS_TO_WORKERS: 'true',
				},
			}),
		);
		await this.startTracked(this.main);

		const count = this.options.workers ?? 2;
		for (let index = 1; index <= count; index++) {
			this.workers.push(this.newWorker(`queue-worker${index}`, this.options.concurrency ?? 10));
		}
		const webhook = this.newWebhookProcess('queue-webhook1', this.webhookPort);
		this.webhooks.push(webhook);
		await Promise.all(
			[...this.workers, webhook].map(async (member) => await this.startTracked(member)),
		);
	}

	private newWorker(name: string, concurrency: number): N8nInstance {
		return this.track(
			new N8nInstance({
				name,
				command: 'worker',
				args: [`--concurrency=${concurrency}`],
				owner: this.owner,
				encryptionKey: this.encryptionKey,
				env: this.sharedEnv(),
			}),
		);
	}

	/** Starts one more worker running `concurrency` jobs at once (n8n's default: 10). */
	async addWorker(concurrency = 10): Promise<N8nInstance> {
		const worker = this.newWorker(`queue-worker${this.workers.length + 1}`, concurrency);
		this.workers.push(worker);
		await this.startTracked(worker);
		return worker;
	}

	/** Stops a worker and removes its folder; the others take its share of the jobs. */
	async removeWorker(worker: N8nInstance) {
		const index = this.workers.indexOf(worker);
		if (index >= 0) this.workers.splice(index, 1);
		await worker.dispose();
	}

	private newWebhookProcess(name: string, port?: number): N8nInstance {
		return this.track(
			new N8nInstance({
				name,
				command: 'webhook',
				port,
				owner: this.owner,
				encryptionKey: this.encryptionKey,
				env: this.sharedEnv(),
			}),
		);
	}

	/** Starts one more webhook process on its own port (what a second replica behind a balancer is). */
	async addWebhookProcess(): Promise<N8nInstance> {
		const webhook = this.newWebhookProcess(`queue-webhook${this.webhooks.length + 1}`);
		this.webhooks.push(webhook);
		await this.startTracked(webhook);
		return webhook;
	}

	/** Stops a webhook process added with addWebhookProcess and removes its folder. */
	async removeWebhookProcess(webhook: N8nInstance) {
		const index = this.webhooks.indexOf(webhook);
		if (index > 0) this.webhooks.splice(index, 1);
		await webhook.dispose();
	}

	private track(instance: N8nInstance): N8nInstance {
		this.footprint.folders.push(instance.userFolder);
		return instance;
	}

	/** Starts (or restarts) a process and records its process group. */
	async startTracked(instance: N8nInstance, restart = false) {
		if (restart) await instance.restart();
		else await instance.start();
		if (instance.pid) this.footprint.pids.push(instance.pid);
	}

	/** Every n8n process of the cluster, main first. */
	get processes(): N8nInstance[] {
		return [this.main, ...this.workers, ...this.webhooks].filter(Boolean);
	}

	/** The process groups of every running process: n8n ones (with task runners), PostgreSQL, Redis. */
	get processGroups(): number[] {
		return [
			...this.processes.map((member) => member.pid ?? 0),
			this.postgres?.pid ?? 0,
			this.redis?.pid ?? 0,
		].filter((pid) => pid > 0);
	}

	/** Stops every n8n process, then PostgreSQL and Redis, and removes all folders (once). */
	async dispose() {
		this.disposing ??= (async () => {
			await Promise.all(
				[...this.workers, ...this.webhooks].map(async (member) => await member.dispose()),
			);
			await this.main?.dispose();
			await Promise.all([this.postgres?.stop(), this.redis?.stop()]);
		})();
		await this.disposing;
	}

	private disposing?: Promise<void>;

	/** Processes still alive and folders still present among those the cluster created. */
	leftovers(): Footprint {
		return {
			pids: this.footprint.pids.filter((pid) => groupMembers(pid).length > 0),
			folders: this.footprint.folders.filter((folder) => existsSync(folder)),
		};
	}
}
