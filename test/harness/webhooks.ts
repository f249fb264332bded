/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/**
 * The trigger inside n8n-core's real contexts, behind a real HTTPS listener: what an n8n 2.41
 * instance does with a webhook trigger, reduced to one workflow.
 *
 * - Publishing, unpublishing and "Listen for test event" run the node's checkExists/create/delete
 *   in n8n-core's HookContext, with the modes, static data and cleanup calls n8n uses (see
 *   active-workflow-manager.js addWebhooks/clearWebhooks and test-webhooks.js in the n8n package).
 * - Requests to `/webhook/<webhookId>/<path>` (production) and `/webhook-test/...` (test) reach the
 *   node's webhook() through n8n-core's WebhookContext with an express-like request (body parsed as
 *   n8n's body parser does, rawBody, query parsed like express's extended parser, headers) and
 *   response. The answer follows n8n's executeWebhook rules for responseMode 'onReceived'.
 * - Production static data is a "database" copy: loaded for every call, saved when changed (after
 *   a successful publish, after unpublish, and after a production request, as n8n's live webhooks
 *   do; n8n 2.41 loses the changes webhook() made when the request starts an execution, and so
 *   does this host, by the same mechanism). A test registration keeps its own static data,
 *   starting empty, and is deleted once a test request has started an execution, as n8n does.
 * - Executions run with n8n-core's WorkflowExecute through Harness.runWorkflow and are recorded.
 *
 * The listener's certificate is issued by the CA in `caDir` (default: env INVOICING_SIM_CA_DIR),
 * so the simulator's deliveries verify it for real.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseForm } from 'node:querystring';
import { getCACertificates } from 'node:tls';

import { HookContext, WebhookContext } from 'n8n-core';
import type {
	IDataObject,
	INode,
	INodeCredentialsDetails,
	INodeExecutionData,
	INodeType,
	IRun,
	IWebhookData,
	IWebhookDescription,
	IWebhookResponseData,
	IWorkflowBase,
	WorkflowActivateMode,
	WorkflowExecuteMode,
} from 'n8n-workflow';
import { NodeHelpers, Workflow } from 'n8n-workflow';
import { Agent, request } from 'undici';

import { CA_DIR_ENV } from '../simulator';
import { findCertificateAuthority, issueCertificate } from '../simulator/tls';
import { CREDENTIAL_TYPE, TRIGGER_NODE_TYPE } from './node-types';
import type { Harness } from './workflow';

export type WebhookMethod = 'checkExists' | 'create' | 'delete';
export type WebhookKind = 'production' | 'test';

export interface TriggerHostOptions {
	harness: Harness;
	credential: INodeCredentialsDetails;
	/** The trigger node's parameters. */
	parameters?: IDataObject;
	nodeName?: string;
	/** Folder with ca.pem and ca.key; env INVOICING_SIM_CA_DIR unless given. */
	caDir?: string;
	/**
	 * The public base URL n8n builds webhook URLs from (N8N_WEBHOOK_URL), e.g. an http:// one to
	 * test the HTTPS guard. The listener's own https://localhost:<port>/ unless given.
	 */
	publicUrl?: string;
	/** The workflow's ID ('trigger-workflow' unless given), e.g. for a second, imported workflow. */
	workflowId?: string;
	/** The trigger node's webhook ID (random unless given), e.g. for the same workflow on another n8n. */
	webhookId?: string;
}

export interface HookCall {
	kind: WebhookKind;
	method: WebhookMethod;
	mode: WorkflowExecuteMode;
	activation: WorkflowActivateMode;
	/** The node static data the call started with (a copy). */
	staticDataBefore: IDataObject;
	/** The node static data the call left (a copy). */
	staticDataAfter: IDataObject;
	result?: boolean;
	error?: Error;
}

export interface HandledRequest {
	kind: WebhookKind | 'unknown';
	/** Path and query as received. */
	url: string;
	status: number;
	/** The response body as sent. */
	body: string;
	contentType: string | undefined;
	/** Whether the request started an execution. */
	executed: boolean;
}

export interface Execution {
	kind: WebhookKind;
	mode: WorkflowExecuteMode;
	/** The trigger's items, as webhook() returned them. */
	items: INodeExecutionData[];
	/** Set when webhook() threw: n8n records an error execution. */
	webhookError?: Error;
	/** Resolves once the workflow run has finished. */
	done: Promise<IRun | undefined>;
}

export interface PostResult {
	status: number;
	headers: Record<string, string | string[] | undefined>;
	text: string;
	// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read JSON freely
	json: any;
}

interface TestRegistration {
	/** The static data n8n keeps with the registration (it starts empty). */
	staticData: IDataObject;
}

const WORKFLOW_ID = 'trigger-workflow';

type WebhookFn = (this: WebhookContext) => Promise<IWebhookResponseData>;

/** n8n's workflow for one trigger node: a copy per call, as n8n builds one per request. */
export class TriggerHost {
	/** Saved workflow static data, as in n8n's database. */
	private database: IDataObject = {};

	private testRegistration?: TestRegistration;

	/** Whether n8n would route the production URL: published, and not unpublished since. */
	private published = false;

	private readonly runs: Array<Promise<unknown>> = [];

	readonly node: INode;

	readonly workflowId: string;

	readonly hookCalls: HookCall[] = [];

	readonly requests: HandledRequest[] = [];

	readonly executions: Execution[] = [];

	/** How many of the next executions n8n fails to start after webhook() (answering 500, as n8n does). */
	failExecutionStarts = 0;

	/** Requests held until `count` have arrived, then handed to n8n together. */
	private gathering?: { count: number; release: Array<() => void> };

	private constructor(
		private readonly harness: Harness,
		private readonly server: Server,
		private readonly sockets: Set<Socket>,
		private readonly agent: Agent,
		private readonly cleanup: () => void,
		readonly listenUrl: string,
		private publicBase: string,
		options: TriggerHostOptions,
	) {
		this.workflowId = options.workflowId ?? WORKFLOW_ID;
		this.node = {
			id: randomUUID(),
			name: options.nodeName ?? 'Invoicing & Assets Trigger',
			type: TRIGGER_NODE_TYPE,
			typeVersion: 1,
			position: [0, 0],
			webhookId: options.webhookId ?? randomUUID(),
			parameters: (options.parameters ?? {}) as INode['parameters'],
			credentials: { [CREDENTIAL_TYPE]: options.credential },
		};
	}

	static async start(options: TriggerHostOptions): Promise<TriggerHost> {
		const caDir = options.caDir ?? process.env[CA_DIR_ENV];
		const ca = caDir ? findCertificateAuthority(caDir) : undefined;
		if (!ca) {
			throw new Error(
				`TriggerHost needs a CA: pass caDir (e.g. sim.caDir) or run under test/tools/with-test-ca.ts (${CA_DIR_ENV}).`,
			);
		}
		const dir = mkdtempSync(join(tmpdir(), 'invoicing-n8n-host-'));
		const cert = issueCertificate(ca, dir, 'n8n');
		const server = createServer({
			key: readFileSync(cert.keyPath),
			cert: readFileSync(cert.certPath),
			minVersion: 'TLSv1.2',
		});
		const sockets = new Set<Socket>();
		server.on('connection', (socket: Socket) => {
			sockets.add(socket);
			socket.on('close', () => sockets.delete(socket));
		});
		server.on('tlsClientError', (_error: Error, socket: Socket) => socket.destroy());
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		const port = (server.address() as AddressInfo).port;
		const listenUrl = `https://localhost:${port}/`;
		const agent = new Agent({
			connect: { ca: [...getCACertificates('default'), readFileSync(ca.certPath, 'utf8')] },
		});
		const host = new TriggerHost(
			options.harness,
			server,
			sockets,
			agent,
			() => rmSync(dir, { recursive: true, force: true }),
			listenUrl,
			withTrailingSlash(options.publicUrl ?? listenUrl),
			options,
		);
		server.on('request', (req: IncomingMessage, res: ServerResponse) => {
			host.handle(req, res).catch((error: Error) => {
				if (!res.headersSent) {
					res.writeHead(500, { 'content-type': 'application/json' });
					res.end(JSON.stringify({ code: 500, message: `Harness failure: ${error.message}` }));
				}
			});
		});
		return host;
	}

	/* -------------------------------------------------------------- URLs */

	/** The base URL n8n builds webhook URLs from (N8N_WEBHOOK_URL), with a trailing slash. */
	get publicUrl(): string {
		return this.publicBase;
	}

	/** Changes N8N_WEBHOOK_URL, as an administrator would between restarts. */
	setPublicUrl(url: string) {
		this.publicBase = withTrailingSlash(url);
	}

	get webhookBaseUrl(): string {
		return `${this.publicUrl}webhook`;
	}

	get webhookTestBaseUrl(): string {
		return `${this.publicUrl}webhook-test`;
	}

	/** The production URL of the trigger's webhook, as n8n shows it. */
	get webhookUrl(): string {
		return `${this.webhookBaseUrl}/${this.webhookPath()}`;
	}

	get testWebhookUrl(): string {
		return `${this.webhookTestBaseUrl}/${this.webhookPath()}`;
	}

	/* ------------------------------------------------------- static data */

	/** The saved node static data of the trigger (a copy). */
	get nodeStaticData(): IDataObject {
		return clone((this.database[`node:${this.node.name}`] as IDataObject | undefined) ?? {});
	}

	/** The whole saved workflow static data (a copy). */
	get workflowStaticData(): IDataObject {
		return clone(this.database);
	}

	/** The test registration's node static data, while "Listen for test event" is on. */
	get testStaticData(): IDataObject | undefined {
		const data = this.testRegistration?.staticData[`node:${this.node.name}`];
		return data === undefined ? undefined : clone(data as IDataObject);
	}

	get listening(): boolean {
		return this.testRegistration !== undefined;
	}

	/** Replaces the saved workflow static data, as importing a workflow with its static data does. */
	importStaticData(staticData: IDataObject) {
		this.database = clone(staticData);
	}

	setParameters(parameters: IDataObject) {
		this.node.parameters = parameters as INode['parameters'];
	}

	/* ----------------------------------------------------- n8n's flows */

	/**
	 * Publishing (activation): checkExists, then create when it answered false; static data is
	 * saved only when both succeeded. When either fails, n8n removes the workflow's webhooks with
	 * the static data from its database (empty on a first publish) and rethrows.
	 */
	async publish(): Promise<void> {
		const workflow = this.workflow(this.database);
		// n8n stores the route (live from then on) before checkExists and create, and saves the
		// static data only after them: a delivery meanwhile reads the static data of before.
		this.published = true;
		const failure = await this.createIfNotExists(
			workflow,
			'production',
			'trigger',
			'activate',
		).then(
			() => undefined,
			(error: Error) => error,
		);
		if (failure === undefined) {
			this.save(workflow);
			return;
		}
		this.published = false;
		const cleanup = this.workflow(this.database);
		// n8n logs a failed cleanup and throws the original error.
		await this.runHook(cleanup, 'delete', 'production', 'internal', 'update').catch(
			() => undefined,
		);
		this.save(cleanup);
		throw failure;
	}

	/** Unpublishing (deactivation): delete with the saved static data, then save. */
	async unpublish(): Promise<void> {
		const workflow = this.workflow(this.database);
		this.published = false;
		await this.runHook(workflow, 'delete', 'production', 'internal', 'update');
		this.save(workflow);
	}

	/**
	 * The editor's "Listen for test event": a registration with throw-away static data. When the
	 * registration fails, n8n deletes its webhooks with the same data and rethrows.
	 */
	async listenForTestEvent(): Promise<void> {
		if (this.testRegistration) throw new Error('Already listening for a test event');
		const registration: TestRegistration = { staticData: {} };
		const workflow = this.workflow({});
		registration.staticData = workflow.staticData;
		const failure = await this.createIfNotExists(workflow, 'test', 'manual', 'manual').then(
			() => undefined,
			(error: Error) => error,
		);
		if (failure === undefined) {
			this.testRegistration = registration;
			return;
		}
		await this.runHook(workflow, 'delete', 'test', 'internal', 'update');
		throw failure;
	}

	/** Stops listening (n8n does this after a test execution, on timeout or when the user stops). */
	async stopListening(): Promise<void> {
		const registration = this.testRegistration;
		if (!registration) return;
		const workflow = this.workflow({});
		workflow.staticData = registration.staticData;
		await this.runHook(workflow, 'delete', 'test', 'internal', 'update');
		this.testRegistration = undefined;
	}

	/**
	 * One lifecycle method on the saved static data, saving what it leaves when it succeeds
	 * (a building block; publish/unpublish are what n8n does).
	 */
	async call(method: WebhookMethod): Promise<boolean | undefined> {
		const workflow = this.workflow(this.database);
		const mode = method === 'delete' ? 'internal' : 'trigger';
		const activation = method === 'delete' ? 'update' : 'activate';
		const result = await this.runHook(workflow, method, 'production', mode, activation);
		this.save(workflow);
		return result;
	}

	/* ---------------------------------------------------------- requests */

	/** POSTs to the listener with TLS verified against the host's CA. */
	async post(
		url: string,
		body: string | object | undefined,
		headers: Record<string, string> = {},
	): Promise<PostResult> {
		const text = typeof body === 'string' || body === undefined ? body : JSON.stringify(body);
		const response = await request(url, {
			method: 'POST',
			body: text,
			headers: {
				...(typeof body === 'object' ? { 'content-type': 'application/json' } : {}),
				...headers,
			},
			dispatcher: this.agent,
		});
		const responseText = await response.body.text();
		let json: unknown;
		try {
			json = responseText === '' ? undefined : JSON.parse(responseText);
		} catch {
			json = undefined;
		}
		return { status: response.statusCode, headers: response.headers, text: responseText, json };
	}

	/**
	 * Holds the next `count` requests, once read, until all of them have arrived, then lets them
	 * reach webhook() together: deliveries that arrive at the same moment.
	 */
	gatherRequests(count: number) {
		this.gathering = { count, release: [] };
	}

	/** Resolves once every execution started so far has finished. */
	async settled(): Promise<void> {
		while (this.runs.length > 0) {
			const pending = [...this.runs];
			await Promise.allSettled(pending);
			this.runs.splice(0, pending.length);
		}
	}

	async close(): Promise<void> {
		await this.settled();
		await new Promise<void>((resolve) => {
			this.server.close(() => resolve());
			for (const socket of this.sockets) socket.destroy();
		});
		await this.agent.close();
		this.cleanup();
	}

	/* ---------------------------------------------------------- internals */

	private nodeType(): INodeType {
		return this.harness.nodeTypes.getByNameAndVersion(this.node.type, this.node.typeVersion);
	}

	private description(): IWebhookDescription {
		const description = this.nodeType().description.webhooks?.[0];
		if (!description) throw new Error('The trigger declares no webhook');
		return description;
	}

	/** As n8n's WebhookService.getNodeWebhooks: `<webhookId>/<path>`, slashes trimmed. */
	private webhookPath(): string {
		const path = this.description()
			.path.trim()
			.replace(/^\/+|\/+$/g, '');
		return NodeHelpers.getNodeWebhookPath(this.workflowId, this.node, path, false, false);
	}

	/** A Workflow over a copy of `staticData`, or over `staticData` itself (as n8n shares it). */
	private workflow(staticData: IDataObject, share = false): Workflow {
		return new Workflow({
			id: this.workflowId,
			name: 'Trigger workflow',
			nodes: [{ ...this.node, parameters: clone(this.node.parameters as IDataObject) } as INode],
			connections: {},
			nodeTypes: this.harness.nodeTypes,
			active: true,
			staticData: share ? staticData : clone(staticData),
		});
	}

	private workflowBase(): IWorkflowBase {
		return {
			id: this.workflowId,
			name: 'Trigger workflow',
			active: true,
			isArchived: false,
			nodes: [this.node],
			connections: {},
			createdAt: new Date(),
			updatedAt: new Date(),
			activeVersionId: null,
		};
	}

	private additionalData(mode: WorkflowExecuteMode) {
		const additionalData = this.harness.additionalData(mode, randomUUID(), this.workflowBase());
		additionalData.webhookBaseUrl = this.webhookBaseUrl;
		additionalData.webhookTestBaseUrl = this.webhookTestBaseUrl;
		additionalData.webhookWaitingBaseUrl = `${this.publicUrl}webhook-waiting`;
		additionalData.instanceBaseUrl = this.publicUrl.replace(/\/$/, '');
		return additionalData;
	}

	private webhookData(kind: WebhookKind, mode: WorkflowExecuteMode): IWebhookData {
		return {
			httpMethod: this.description().httpMethod as IWebhookData['httpMethod'],
			node: this.node.name,
			path: this.webhookPath(),
			webhookDescription: this.description(),
			workflowId: this.workflowId,
			workflowExecuteAdditionalData: this.additionalData(mode),
			isTest: kind === 'test' ? true : undefined,
		};
	}

	private async createIfNotExists(
		workflow: Workflow,
		kind: WebhookKind,
		mode: WorkflowExecuteMode,
		activation: WorkflowActivateMode,
	) {
		const exists = await this.runHook(workflow, 'checkExists', kind, mode, activation);
		if (!exists) await this.runHook(workflow, 'create', kind, mode, activation);
	}

	/** As n8n's WebhookService.runWebhookMethod. */
	private async runHook(
		workflow: Workflow,
		method: WebhookMethod,
		kind: WebhookKind,
		mode: WorkflowExecuteMode,
		activation: WorkflowActivateMode,
	): Promise<boolean | undefined> {
		const node = workflow.getNode(this.node.name) as INode;
		const webhookData = this.webhookData(kind, mode);
		const fn = this.nodeType().webhookMethods?.[webhookData.webhookDescription.name]?.[method];
		if (!fn) throw new Error(`The trigger has no webhook method ${method}`);
		const key = `node:${node.name}`;
		const call: HookCall = {
			kind,
			method,
			mode,
			activation,
			staticDataBefore: clone((workflow.staticData[key] as IDataObject | undefined) ?? {}),
			staticDataAfter: {},
		};
		this.hookCalls.push(call);
		const context = new HookContext(
			workflow,
			node,
			webhookData.workflowExecuteAdditionalData,
			mode,
			activation,
			webhookData,
		);
		const outcome = await Promise.resolve()
			.then(async () => await fn.call(context))
			.then(
				(result) => ({ result, error: undefined }),
				(error: Error) => ({ result: undefined, error }),
			);
		call.staticDataAfter = clone((workflow.staticData[key] as IDataObject | undefined) ?? {});
		call.result = outcome.result;
		call.error = outcome.error;
		if (outcome.error) throw outcome.error;
		return outcome.result;
	}

	/** As n8n's WorkflowStaticDataService.saveStaticData: only when it changed. */
	private save(workflow: Workflow) {
		if (workflow.staticData.__dataChanged === true) {
			this.database = clone(workflow.staticData);
			workflow.staticData.__dataChanged = false;
		}
	}

	private route(path: string): WebhookKind | undefined {
		const webhookPath = `/${this.webhookPath()}`;
		if (path === `/webhook${webhookPath}`) return 'production';
		if (path === `/webhook-test${webhookPath}`) return 'test';
		return undefined;
	}

	private async handle(req: IncomingMessage, res: ServerResponse) {
		const rawBody = await readAll(req);
		const gathering = this.gathering;
		if (gathering) {
			await new Promise<void>((resolve) => {
				gathering.release.push(resolve);
				if (gathering.release.length < gathering.count) return;
				this.gathering = undefined;
				for (const release of gathering.release) release();
			});
		}
		const url = req.url ?? '/';
		const queryAt = url.indexOf('?');
		const path = queryAt === -1 ? url : url.slice(0, queryAt);
		const kind = this.route(path);
		const response = new ExpressLikeResponse(res);
		const log: HandledRequest = {
			kind: kind ?? 'unknown',
			url,
			status: 0,
			body: '',
			contentType: undefined,
			executed: false,
		};
		this.requests.push(log);
		response.onFinish = (status, body, contentType) => {
			log.status = status;
			log.body = body;
			log.contentType = contentType;
		};

		if (
			kind === undefined ||
			req.method !== this.description().httpMethod ||
			(kind === 'test' && !this.testRegistration) ||
			(kind === 'production' && !this.published)
		) {
			response.status(404).json({
				code: 404,
				message: `The requested webhook "${req.method} ${path}" is not registered.`,
			});
			return;
		}

		const mime = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
		const parsed = parseBody(mime, rawBody);
		if (!parsed.ok) {
			// n8n's body parser answers before the node sees the request.
			response.status(422).json({ code: 422, message: 'Failed to parse request body' });
			return;
		}
		const expressRequest = {
			method: req.method,
			url,
			originalUrl: url,
			path,
			headers: req.headers,
			params: {},
			query: parseQuery(queryAt === -1 ? '' : url.slice(queryAt + 1)),
			body: parsed.body,
			rawBody,
			contentType: mime || undefined,
			encoding: 'utf-8',
		};
		await this.executeWebhook(kind, expressRequest, response, log);
	}

	/** n8n's executeWebhook for responseMode 'onReceived', with its live/test webhook wrappers. */
	private async executeWebhook(
		kind: WebhookKind,
		req: Record<string, unknown>,
		res: ExpressLikeResponse,
		log: HandledRequest,
	) {
		const mode: WorkflowExecuteMode = kind === 'test' ? 'manual' : 'webhook';
		// The live-webhook path builds the Workflow over the static data object it loaded, and
		// shares that object with the execution it starts (see executeWebhook below).
		const loadedStaticData = clone(kind === 'production' ? this.database : {});
		const workflow = this.workflow(loadedStaticData, true);
		if (kind === 'test' && this.testRegistration) {
			workflow.setTestStaticData(this.testRegistration.staticData);
		}
		const node = workflow.getNode(this.node.name) as INode;
		const webhookData = this.webhookData(kind, mode);
		const description = webhookData.webhookDescription;
		const responseMode = workflow.expression.getSimpleParameterValue(
			node,
			description.responseMode,
			mode,
			{},
			undefined,
			'onReceived',
		);
		if (responseMode !== 'onReceived') {
			throw new Error(
				`The harness reproduces responseMode 'onReceived' only, not ${String(responseMode)}`,
			);
		}
		const responseCode = workflow.expression.getSimpleParameterValue(
			node,
			description.responseCode as string | undefined,
			mode,
			{},
			undefined,
			200,
		) as number;
		const responseData = workflow.expression.getComplexParameterValue(
			node,
			description.responseData,
			mode,
			{},
			undefined,
			'firstEntryJson',
		);

		const additionalData = this.additionalData(mode);
		additionalData.httpRequest = req as unknown as typeof additionalData.httpRequest;
		additionalData.httpResponse = res as unknown as typeof additionalData.httpResponse;
		const context = new WebhookContext(workflow, node, additionalData, mode, webhookData, [], null);

		let result: IWebhookResponseData;
		let webhookError: Error | undefined;
		try {
			result = await (this.nodeType().webhook as WebhookFn).call(context);
		} catch (error) {
			// n8n answers 500 and records an error execution.
			webhookError = error as Error;
			result = { noWebhookResponse: true, workflowData: [[{ json: {} }]] };
			res.status(500).json({
				code: 0,
				message: 'Workflow Webhook Error: Workflow could not be started!',
			});
		}
		// The live-webhook path saves changed static data in its response callback. When webhook()
		// starts an execution, n8n's WorkflowRunner first wraps the same static data object in a
		// new Workflow (establishContextForPersistence), which resets its "changed" flag: the
		// changes webhook() made are then not saved. Reproduced, not assumed, by doing the same.
		if (result.workflowData !== undefined && !webhookError && result.noWebhookResponse !== true) {
			this.workflow(loadedStaticData, true);
		}
		// After webhook() threw, n8n answers with the error and saves nothing.
		if (kind === 'production' && !webhookError) this.save(workflow);

		if (result.noWebhookResponse === true && !res.headersSent) {
			throw new Error('webhook() returned noWebhookResponse without answering the request');
		}
		if (result.workflowData === undefined) {
			if (!res.headersSent) {
				res.status(responseCode);
				res.sendLegacy(result.webhookResponse ?? { message: 'Webhook call received' });
			}
			return;
		}

		if (this.failExecutionStarts > 0 && !webhookError && !res.headersSent) {
			this.failExecutionStarts -= 1;
			res
				.status(500)
				.json({ code: 0, message: 'Workflow Webhook Error: Workflow could not be started!' });
			return;
		}

		const items = result.workflowData[0] ?? [];
		const done = webhookError
			? Promise.resolve(undefined)
			: this.harness.runWorkflow({
					nodes: [node],
					connections: {},
					startNode: node.name,
					input: items,
					mode,
				});
		this.runs.push(done);
		this.executions.push({ kind, mode, items, webhookError, done });
		log.executed = true;

		if (!res.headersSent) {
			// extractWebhookOnReceivedResponse, then sendStaticResponse.
			const body =
				responseData === 'noData'
					? undefined
					: responseData
						? responseData
						: result.webhookResponse !== undefined
							? result.webhookResponse
							: { message: 'Workflow was started' };
			res.status(responseCode);
			if (typeof body === 'string') res.send(body);
			else res.json(body);
		}
		// n8n removes a test registration once it has started an execution.
		if (kind === 'test') await this.stopListening();
	}
}

/** The parts of express's Response that nodes and n8n use here. */
class ExpressLikeResponse {
	statusCode = 200;

	private readonly headers = new Map<string, string>();

	onFinish: (status: number, body: string, contentType: string | undefined) => void = () => {};

	constructor(private readonly res: ServerResponse) {}

	get headersSent(): boolean {
		return this.res.headersSent;
	}

	get writableFinished(): boolean {
		return this.res.writableFinished;
	}

	once(event: string, listener: () => void): this {
		this.res.once(event, listener);
		return this;
	}

	status(code: number): this {
		this.statusCode = code;
		return this;
	}

	setHeader(name: string, value: string): this {
		this.headers.set(name.toLowerCase(), value);
		return this;
	}

	header(name: string, value: string): this {
		return this.setHeader(name, value);
	}

	getHeader(name: string): string | undefined {
		return this.headers.get(name.toLowerCase());
	}

	json(body: unknown): this {
		if (!this.headers.has('content-type'))
			this.setHeader('content-type', 'application/json; charset=utf-8');
		return this.end(body === undefined ? '' : JSON.stringify(body));
	}

	send(body: unknown): this {
		if (typeof body === 'string') {
			if (!this.headers.has('content-type'))
				this.setHeader('content-type', 'text/html; charset=utf-8');
			return this.end(body);
		}
		if (Buffer.isBuffer(body)) return this.end(body.toString('utf8'));
		if (body === undefined || body === null) return this.end('');
		return this.json(body);
	}

	/** n8n's sendLegacyResponse with raw = true. */
	sendLegacy(data: unknown): this {
		return typeof data === 'string' ? this.send(data) : this.json(data);
	}

	end(body = ''): this {
		if (this.res.headersSent) throw new Error('The response was already sent');
		this.res.writeHead(this.statusCode, Object.fromEntries(this.headers));
		this.res.end(body);
		this.onFinish(this.statusCode, body, this.headers.get('content-type'));
		return this;
	}
}

async function readAll(req: IncomingMessage): Promise<Buffer> {
	const chunks: Buffer[] = [];
	for await (const chunk of req) chunks.push(chunk as Buffer);
	return Buffer.concat(chunks);
}

/** n8n's parseBody: JSON, urlencoded forms and text are parsed; anything else is left unset. */
function parseBody(mime: string, rawBody: Buffer): { ok: true; body: unknown } | { ok: false } {
	if (rawBody.length === 0) return { ok: true, body: undefined };
	const text = rawBody.toString('utf8').replace(/^\uFEFF/, '');
	try {
		if (mime === 'application/json') return { ok: true, body: JSON.parse(text) };
		if (mime === 'application/x-www-form-urlencoded') return { ok: true, body: parseForm(text) };
		if (mime === 'text/plain') return { ok: true, body: text };
		return { ok: true, body: undefined };
	} catch {
		return { ok: false };
	}
}

/**
 * Query arguments as express's 'extended' parser (qs) gives them for the shapes tests send: a
 * repeated name or `name[]` becomes an array, `name[sub]` an object.
 */
export function parseQuery(search: string): Record<string, unknown> {
	const query: Record<string, unknown> = {};
	for (const [rawName, value] of new URLSearchParams(search)) {
		const bracket = /^([^[\]]+)\[([^[\]]*)\]$/.exec(rawName);
		const name = bracket ? bracket[1] : rawName;
		const current = query[name];
		if (bracket && bracket[2] !== '') {
			const object =
				typeof current === 'object' && current !== null && !Array.isArray(current)
					? (current as Record<string, unknown>)
					: {};
			object[bracket[2]] = value;
			query[name] = object;
		} else if (current === undefined) {
			query[name] = bracket ? [value] : value;
		} else {
			query[name] = Array.isArray(current) ? [...current, value] : [current, value];
		}
	}
	return query;
}

function clone<T>(value: T): T {
	return JSON.parse(JSON.stringify(value ?? {})) as T;
}

function withTrailingSlash(url: string): string {
	return url.endsWith('/') ? url : `${url}/`;
}
