import type {
	ICredentialDataDecryptedObject,
	IDataObject,
	IExecuteFunctions,
	IHookFunctions,
	IHttpRequestMethods,
	IHttpRequestOptions,
	ILoadOptionsFunctions,
	IN8nHttpFullResponse,
} from 'n8n-workflow';
import { NodeOperationError, sleep } from 'n8n-workflow';

import { JSON_MEDIA_TYPE, readPage } from './contract';
import { readFailure, toNodeApiError, type HttpFailure } from './errors';
import { nextPage } from './pagination';
import { DEFAULT_RETRY_POLICY, nextRetryDelayMs, type RetryPolicy } from './retry';

export const CREDENTIAL_TYPE = 'invoicingAssetsApi';

export const REQUEST_TIMEOUT_MS = 30_000;

export type ServiceContext = IExecuteFunctions | IHookFunctions | ILoadOptionsFunctions;

export interface ServiceRequest {
	method: IHttpRequestMethods;
	path: string;
	qs?: IDataObject;
	body?: IDataObject;
	/** Names the record in a "not found" message, e.g. "Invoice 'INV-1'". */
	subject?: string;
	itemIndex?: number;
}

/**
 * Token refreshes are serialised per credential within this n8n process: n8n has no lock
 * around preAuthentication, so concurrent requests that all met an expired token would
 * each fetch a new one.
 */
const tokenQueues = new Map<string, Promise<unknown>>();

async function oneAtATime<T>(key: string, task: () => Promise<T>): Promise<T> {
	const previous = tokenQueues.get(key) ?? Promise.resolve();
	const run = previous.then(task, task);
	const settled = run.then(
		() => undefined,
		() => undefined,
	);
	tokenQueues.set(key, settled);
	try {
		return await run;
	} finally {
		if (tokenQueues.get(key) === settled) tokenQueues.delete(key);
	}
}

/** One client per node run: it reads the credential's Base URL once and shares one token. */
export class ServiceClient {
	private credentialData?: Promise<ICredentialDataDecryptedObject>;

	private firstCall?: Promise<unknown>;

	constructor(
		private readonly context: ServiceContext,
		private readonly retryPolicy: RetryPolicy = DEFAULT_RETRY_POLICY,
	) {}

	/** Sends a request with retries and returns the parsed body; failures become NodeApiErrors. */
	async request<T = unknown>(request: ServiceRequest): Promise<T> {
		return (await this.requestFull(request)).body as T;
	}

	async requestFull(request: ServiceRequest): Promise<IN8nHttpFullResponse> {
		const options: IHttpRequestOptions = {
			method: request.method,
			url: `${await this.resolveBaseUrl(request.itemIndex)}${request.path}`,
			qs: request.qs,
			body: request.body,
			headers: { Accept: JSON_MEDIA_TYPE },
			json: true,
			returnFullResponse: true,
			timeout: REQUEST_TIMEOUT_MS,
		};
		const started = Date.now();
		for (let attempt = 1; ; attempt++) {
			try {
				return await this.sendOnce(options);
			} catch (error) {
				const failure = readFailure(error);
				const elapsedMs = Date.now() - started;
				const delay = nextRetryDelayMs(
					failure,
					request.method,
					attempt,
					elapsedMs,
					this.retryPolicy,
				);
				if (delay === undefined) throw this.toError(failure, request, attempt, elapsedMs);
				await sleep(delay);
			}
		}
	}

	/** Reads up to `limit` records (all when undefined) page by page, never more than needed. */
	async paginate<T>(
		path: string,
		qs: IDataObject,
		limit?: number,
		itemIndex?: number,
	): Promise<T[]> {
		const records: T[] = [];
		for (;;) {
			const remaining = limit === undefined ? Number.MAX_SAFE_INTEGER : limit - records.length;
			if (remaining <= 0) break;
			const { page, pageSize } = nextPage(records.length, remaining);
			const body = await this.request({
				method: 'GET',
				path,
				qs: { ...qs, page, pageSize },
				itemIndex,
			});
			const envelope = readPage<T>(body);
			if (!envelope) {
				throw new NodeOperationError(
					this.context.getNode(),
					'The service answered a list request with an unexpected shape',
					{
						description:
							'Expected an object with an "items" array. The Data Service’s list format may have changed; please report this.',
						itemIndex,
					},
				);
			}
			records.push(...envelope.items.slice(0, remaining));
			const reachedTotal =
				typeof envelope.totalItems === 'number' && records.length >= envelope.totalItems;
			if (envelope.items.length < pageSize || reachedTotal) break;
		}
		return records;
	}

	private async sendOnce(options: IHttpRequestOptions): Promise<IN8nHttpFullResponse> {
		const key = this.tokenKey();
		const withoutRefresh = async () =>
			(await this.context.helpers.httpRequestWithAuthentication.call(
				this.context,
				CREDENTIAL_TYPE,
				{ ...options },
				{ preAuthenticationRetryStatusCode: [] },
			)) as IN8nHttpFullResponse;
		const withRefresh = async () =>
			(await this.context.helpers.httpRequestWithAuthentication.call(
				this.context,
				CREDENTIAL_TYPE,
				{ ...options },
			)) as IN8nHttpFullResponse;

		// The first call alone may fetch a token; the others then read the stored one.
		if (!this.firstCall) {
			this.firstCall = oneAtATime(key, withRefresh);
			return (await this.firstCall) as IN8nHttpFullResponse;
		}
		await this.firstCall.catch(() => undefined);
		let refused: unknown;
		try {
			return await withoutRefresh();
		} catch (error) {
			refused = error;
		}
		// Only a refused token is worth a refresh; any other failure goes back to the retry loop.
		if (readFailure(refused).status !== 401) throw refused;
		return await oneAtATime(key, withRefresh);
	}

	private tokenKey(): string {
		const node = this.context.getNode();
		const credential = node.credentials?.[CREDENTIAL_TYPE];
		return credential?.id ?? credential?.name ?? node.id;
	}

	/** The credential's data, read once per node run. */
	async credentials(): Promise<ICredentialDataDecryptedObject> {
		this.credentialData ??= this.context.getCredentials(CREDENTIAL_TYPE);
		return await this.credentialData;
	}

	private async resolveBaseUrl(itemIndex?: number): Promise<string> {
		const baseUrl = String((await this.credentials()).baseUrl ?? '')
			.trim()
			.replace(/\/+$/, '');
		if (!/^https:\/\/[^/]/i.test(baseUrl)) {
			throw new NodeOperationError(
				this.context.getNode(),
				'The credential’s Base URL must start with https://',
				{
					description:
						'The Data Service is served over HTTPS only. Open the credential and enter the Base URL of your environment, e.g. https://api.example.com.',
					itemIndex,
				},
			);
		}
		return baseUrl;
	}

	private toError(
		failure: HttpFailure,
		request: ServiceRequest,
		attempts: number,
		elapsedMs: number,
	) {
		return toNodeApiError(failure, {
			node: this.context.getNode(),
			itemIndex: request.itemIndex,
			subject: request.subject,
			attempts,
			elapsedMs,
			timeoutMs: REQUEST_TIMEOUT_MS,
		});
	}
}
