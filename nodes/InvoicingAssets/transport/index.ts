import type {
	IAdditionalCredentialOptions,
	ICredentialDataDecryptedObject,
	ICredentialsDecrypted,
	IDataObject,
	IExecuteFunctions,
	IHookFunctions,
	IHttpRequestMethods,
	IHttpRequestOptions,
	ILoadOptionsFunctions,
	IN8nHttpFullResponse,
	IPollFunctions,
} from 'n8n-workflow';
import { NodeOperationError, sleep } from 'n8n-workflow';

import {
	FIRST_PAGE,
	isHttpsAddress,
	JSON_MEDIA_TYPE,
	pageQuery,
	paths,
	readPage,
	readSubscriptionListPage,
	type Subscription,
} from './contract';
import { mayHaveActed, readFailure, toNodeApiError, type HttpFailure } from './errors';
import { nextPage } from './pagination';
import { DEFAULT_RETRY_POLICY, nextRetryDelayMs, type RetryPolicy } from './retry';

export const CREDENTIAL_TYPE = 'invoicingAssetsApi';

export const REQUEST_TIMEOUT_MS = 30_000;

/** One page as paginate reads it. */
interface PageRead<T> {
	items: T[];
	totalItems?: number;
	/** A short page is the last page; so is the page that reaches the total. */
	isLast: boolean;
}

/** How many pages of one list are fetched at the same time once its total is known. */
export const PAGE_CONCURRENCY = 4;

export type ServiceContext =
	| IExecuteFunctions
	| IHookFunctions
	| ILoadOptionsFunctions
	| IPollFunctions;

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

function tokenOf(credentials: ICredentialDataDecryptedObject): string {
	return String(credentials.accessToken ?? '');
}

/** One client per node run: it reads the credential's Base URL once and shares one token. */
export class ServiceClient {
	private credentialData?: Promise<ICredentialDataDecryptedObject>;

	private sharedCredentialRecord?: Promise<{ key: string; decrypted: ICredentialsDecrypted }>;

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
			// The service answers in place; a redirect would carry the bearer token to another address.
			disableFollowRedirect: true,
		};
		const started = Date.now();
		let earlierAttemptMayHaveActed = false;
		for (let attempt = 1; ; attempt++) {
			try {
				return await this.sendOnce(options);
			} catch (error) {
				const failure = readFailure(error);
				// A delete whose earlier answer was lost, and which now finds nothing, has done its job.
				if (request.method === 'DELETE' && earlierAttemptMayHaveActed && failure.status === 404) {
					return { body: undefined, headers: {}, statusCode: 204 };
				}
				const elapsedMs = Date.now() - started;
				const delay = nextRetryDelayMs(
					failure,
					request.method,
					attempt,
					elapsedMs,
					this.retryPolicy,
				);
				if (delay === undefined) throw this.toError(failure, request, attempt, elapsedMs);
				earlierAttemptMayHaveActed ||= mayHaveActed(failure);
				if (!(await this.waitUnlessCancelled(delay))) {
					throw this.toError(failure, request, attempt, elapsedMs);
				}
			}
		}
	}

	/** Waits `ms`; false when the execution was cancelled meanwhile (the wait then ends at once). */
	private async waitUnlessCancelled(ms: number): Promise<boolean> {
		const signal = (this.context as Partial<IExecuteFunctions>).getExecutionCancelSignal?.();
		if (!signal) {
			await sleep(ms);
			return true;
		}
		if (signal.aborted) return false;
		let onAbort = () => {};
		const aborted = new Promise<void>((resolve) => (onAbort = resolve));
		signal.addEventListener('abort', onAbort, { once: true });
		await Promise.race([sleep(ms), aborted]);
		signal.removeEventListener('abort', onAbort);
		return !signal.aborted;
	}

	/**
	 * Reads up to `limit` records (all when undefined), never asking for more than needed. Once
	 * the first page tells the total, the pages still needed are fetched up to
	 * PAGE_CONCURRENCY at a time; without a total, or when the list grew meanwhile, page by page.
	 */
	async paginate<T>(
		path: string,
		qs: IDataObject,
		limit?: number,
		itemIndex?: number,
	): Promise<T[]> {
		const wanted = limit ?? Number.MAX_SAFE_INTEGER;
		const records: T[] = [];
		const remaining = () => wanted - records.length;
		if (remaining() <= 0) return records;

		let last = await this.readPageAt<T>(path, qs, nextPage(0, remaining()), itemIndex);
		records.push(...last.items.slice(0, remaining()));
		if (last.isLast) return records;

		if (last.totalItems !== undefined) {
			const planned = Math.min(wanted, last.totalItems);
			const pages: Array<PageRead<T> | undefined> = [];
			let cursor = records.length;
			let stop = false;
			// Each worker takes the next page of the plan; a last page or a failure stops them all.
			const worker = async () => {
				while (!stop && cursor < planned) {
					const next = nextPage(cursor, wanted - cursor);
					cursor += next.pageSize;
					const slot = pages.push(undefined) - 1;
					let page: PageRead<T> | undefined;
					try {
						page = await this.readPageAt<T>(path, qs, next, itemIndex);
					} finally {
						if (!page || page.isLast) stop = true;
					}
					pages[slot] = page;
				}
			};
			await Promise.all(Array.from({ length: PAGE_CONCURRENCY }, worker));
			for (const page of pages) {
				if (!page) break;
				records.push(...page.items.slice(0, Math.max(0, remaining())));
				last = page;
				if (page.isLast) return records;
			}
		}
		while (remaining() > 0 && !last.isLast) {
			last = await this.readPageAt<T>(path, qs, nextPage(records.length, remaining()), itemIndex);
			records.push(...last.items.slice(0, remaining()));
		}
		return records;
	}

	/**
	 * Every subscription of the API key, page after page when the list answers the page envelope.
	 * An answer that cannot be read is an error, never an empty list: taken for one, the trigger
	 * would subscribe a second time.
	 */
	async listSubscriptions(itemIndex?: number): Promise<Subscription[]> {
		const byId = new Map<string, Subscription>();
		let requested: { page: number; pageSize: number } | undefined;
		for (;;) {
			const body = await this.request({
				method: 'GET',
				path: paths.subscriptions,
				qs: requested ? pageQuery(requested.page, requested.pageSize) : undefined,
				itemIndex,
			});
			const page = readSubscriptionListPage(body, requested?.page ?? FIRST_PAGE);
			if (!page) throw this.unreadableSubscriptionList('Its answer is neither shape.', itemIndex);
			const before = byId.size;
			for (const subscription of page.subscriptions) byId.set(subscription.id, subscription);
			if (!page.next) return [...byId.values()];
			if (byId.size === before) {
				throw this.unreadableSubscriptionList(
					`Page ${page.next.page - 1} repeated subscriptions it had given already, so the pages never end.`,
					itemIndex,
				);
			}
			requested = page.next;
		}
	}

	private unreadableSubscriptionList(detail: string, itemIndex?: number): NodeOperationError {
		return new NodeOperationError(
			this.context.getNode(),
			'The service’s subscription list has a form the node cannot read; please report this',
			{
				description: `Expected a JSON array of subscriptions, or pages of the form {"items": [...], "page", "pageSize", "totalItems"}, each subscription with an "id". ${detail} Rather than take an unreadable list for an empty one (for a trigger: and subscribe twice), the node stops. The package’s assumptions about the service are listed under “Service contract” in its README.`,
				itemIndex,
			},
		);
	}

	private async readPageAt<T>(
		path: string,
		qs: IDataObject,
		{ page, pageSize }: { page: number; pageSize: number },
		itemIndex?: number,
	): Promise<PageRead<T>> {
		const body = await this.request({
			method: 'GET',
			path,
			qs: { ...qs, ...pageQuery(page, pageSize) },
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
		const totalItems =
			typeof envelope.totalItems === 'number' && Number.isFinite(envelope.totalItems)
				? envelope.totalItems
				: undefined;
		const readSoFar = (page - FIRST_PAGE) * pageSize + envelope.items.length;
		if (envelope.items.length < pageSize && totalItems !== undefined && readSoFar < totalItems) {
			// A page shorter than asked, though more records remain: the service pages differently
			// from the contract (e.g. a lower page-size limit). Stopping here would lose records.
			throw new NodeOperationError(
				this.context.getNode(),
				'The service’s pages do not add up, so the list would be incomplete',
				{
					description: `Page ${page} held ${envelope.items.length} records where ${pageSize} were asked for, though the service reports ${totalItems} in all. The node stopped rather than return part of the list. The service’s paging may differ from what this node assumes (see “Service contract” in the README); please report it.`,
					itemIndex,
				},
			);
		}
		return {
			items: envelope.items,
			totalItems,
			isLast:
				envelope.items.length < pageSize || (totalItems !== undefined && readSoFar >= totalItems),
		};
	}

	private async sendOnce(options: IHttpRequestOptions): Promise<IN8nHttpFullResponse> {
		const { key, decrypted } = await this.sharedCredential();
		const send = async (additional: IAdditionalCredentialOptions) =>
			(await this.context.helpers.httpRequestWithAuthentication.call(
				this.context,
				CREDENTIAL_TYPE,
				{ ...options },
				{ credentialsDecrypted: decrypted, ...additional },
			)) as IN8nHttpFullResponse;
		const data = decrypted.data as ICredentialDataDecryptedObject;
		// One request at a time per credential may renew the token. It first re-reads the stored
		// credential: the request before it in the queue (of this run or another) may have stored
		// a new token, which is then used instead of fetching one more. A token the service has
		// just refused is not sent again: emptied, n8n fetches a new one before the request.
		const renewing = async (refusedToken?: string) =>
			await oneAtATime(key, async () => {
				Object.assign(data, await this.context.getCredentials(CREDENTIAL_TYPE));
				if (refusedToken !== undefined && tokenOf(data) === refusedToken) data.accessToken = '';
				return await send({});
			});

		const sendRenewingIfRefused = async () => {
			const token = tokenOf(data);
			let refused: unknown;
			try {
				return await send({ preAuthenticationRetryStatusCode: [] });
			} catch (error) {
				refused = error;
			}
			// Only a refused token is worth a renewal; any other failure goes back to the retry loop.
			if (readFailure(refused).status !== 401) throw refused;
			return await renewing(token);
		};

		// The run's first call goes alone, so that a missing or expired token is renewed once for
		// the run; runs wait for one another only while one of them renews.
		if (!this.firstCall) {
			const hasToken = tokenOf(data) !== '';
			this.firstCall = hasToken ? sendRenewingIfRefused() : renewing();
			return (await this.firstCall) as IN8nHttpFullResponse;
		}
		await this.firstCall.catch(() => undefined);
		return await sendRenewingIfRefused();
	}

	/**
	 * The credential as every request of this run hands it to n8n, so that n8n does not read
	 * and decrypt it again for each request. n8n writes a refreshed token into this same object
	 * (and persists it), so later requests of the run use the new token.
	 */
	private async sharedCredential(): Promise<{ key: string; decrypted: ICredentialsDecrypted }> {
		this.sharedCredentialRecord ??= this.credentials().then((data) => {
			const node = this.context.getNode();
			const reference = node.credentials?.[CREDENTIAL_TYPE];
			return {
				key: reference?.id ?? reference?.name ?? node.id,
				decrypted: {
					id: reference?.id ?? '',
					name: reference?.name ?? '',
					type: CREDENTIAL_TYPE,
					data,
				},
			};
		});
		return await this.sharedCredentialRecord;
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
		if (!isHttpsAddress(baseUrl)) {
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
			method: request.method,
			attempts,
			elapsedMs,
			timeoutMs: REQUEST_TIMEOUT_MS,
			maxRetryWaitMs: this.retryPolicy.maxTotalMs,
		});
	}
}
