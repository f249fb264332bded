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
	INode,
	IPollFunctions,
} from 'n8n-workflow';
import { NodeOperationError, sleep } from 'n8n-workflow';

import { isHttpsAddress, JSON_MEDIA_TYPE, paths, type Subscription } from './contract';
import { mayHaveActed, readFailure, toNodeApiError, type HttpFailure } from './errors';
import { readAllPages, SUBSCRIPTION_LIST } from './pageReader';
import { DEFAULT_RETRY_POLICY, nextRetryDelayMs, type RetryPolicy } from './retry';
import { holdsUsableToken, isBoundTo, tokenFingerprint } from './tokenBinding';

// The Polling Trigger's window reader imports it from here until it reads through pageReader.ts.
export { PAGE_CONCURRENCY } from './pageReader';

export const CREDENTIAL_TYPE = 'invoicingAssetsApi';

export const REQUEST_TIMEOUT_MS = 30_000;

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
	/**
	 * Epoch ms by which the request should be done (e.g. a poll's budget): no retry waits past it,
	 * and an attempt is given up DEADLINE_GRACE_MS after it (after that long, once past it).
	 */
	deadline?: number;
}

/** How long an attempt may run past its request's deadline before it is given up. */
export const DEADLINE_GRACE_MS = 1500;

/**
 * Token renewals in progress in this n8n process, per credential: each resolves to the new token
 * (or rejects with the renewal's failure). n8n has no lock around preAuthentication, so requests
 * that all met an expired token would each fetch a new one; here one renews, the others wait for
 * its token and never send an empty one.
 */
const renewals = new Map<string, Promise<string>>();

/**
 * The stored token field when it holds a token obtained for these credential fields, else '': a
 * token of another key or address counts as none, so n8n renews before the request is sent.
 */
function usableToken(credentials: ICredentialDataDecryptedObject): string {
	return holdsUsableToken(credentials) ? String(credentials.accessToken) : '';
}

/** The credential's Base URL as requests start with it. */
function baseUrlOf(credentials: ICredentialDataDecryptedObject): string {
	return String(credentials.baseUrl ?? '')
		.trim()
		.replace(/\/+$/, '');
}

/** One client per node run: it reads the credential's Base URL once and shares one token. */
export class ServiceClient {
	private credentialData?: Promise<ICredentialDataDecryptedObject>;

	private sharedCredentialRecord?: Promise<{ key: string; decrypted: ICredentialsDecrypted }>;

	private firstCall?: Promise<unknown>;

	/** A token renewal of this run that failed: the run's later requests fail with it, without asking again. */
	private renewalFailure?: unknown;

	constructor(
		private readonly context: ServiceContext,
		private readonly retryPolicy: RetryPolicy = DEFAULT_RETRY_POLICY,
	) {}

	/** Sends a request with retries and returns the parsed body; failures become NodeApiErrors. */
	async request<T = unknown>(request: ServiceRequest): Promise<T> {
		return (await this.requestFull(request)).body as T;
	}

	async requestFull(request: ServiceRequest): Promise<IN8nHttpFullResponse> {
		await this.requireHttpsBaseUrl(request.itemIndex);
		const options: Omit<IHttpRequestOptions, 'url'> = {
			method: request.method,
			qs: request.qs,
			body: request.body,
			headers: { Accept: JSON_MEDIA_TYPE },
			json: true,
			returnFullResponse: true,
			timeout: this.timeoutBefore(request.deadline),
			// The service answers in place; a redirect would carry the bearer token to another address.
			disableFollowRedirect: true,
		};
		const started = Date.now();
		let earlierAttemptMayHaveActed = false;
		for (let attempt = 1; ; attempt++) {
			try {
				return await this.sendOnce(request.path, options);
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
				const pastDeadline =
					request.deadline !== undefined &&
					delay !== undefined &&
					Date.now() + delay >= request.deadline;
				if (delay === undefined || pastDeadline) {
					throw this.toError(failure, request, attempt, elapsedMs, options.timeout);
				}
				options.timeout = this.timeoutBefore(request.deadline, delay);
				earlierAttemptMayHaveActed ||= mayHaveActed(failure);
				if (!(await this.waitUnlessCancelled(delay))) {
					throw this.toError(failure, request, attempt, elapsedMs, options.timeout);
				}
			}
		}
	}

	/**
	 * The time an attempt starting after `waitMs` may take: the usual limit, within the deadline,
	 * but at least DEADLINE_GRACE_MS (an attempt past the deadline is one the caller still wants).
	 */
	private timeoutBefore(deadline: number | undefined, waitMs = 0): number {
		if (deadline === undefined) return REQUEST_TIMEOUT_MS;
		const left = deadline + DEADLINE_GRACE_MS - Date.now() - waitMs;
		return Math.max(DEADLINE_GRACE_MS, Math.min(REQUEST_TIMEOUT_MS, left));
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

	/** The node this client runs for, to name in errors. */
	getNode(): INode {
		return this.context.getNode();
	}

	/**
	 * Every subscription of the API key, page after page when the list answers the page envelope.
	 * An answer that cannot be read is an error, never an empty list: taken for one, the trigger
	 * would subscribe a second time.
	 */
	async listSubscriptions(itemIndex?: number): Promise<Subscription[]> {
		// One page at a time: the list is assumed whole in one answer, and a page size the service
		// chose is known only from its answer.
		const read = { path: paths.subscriptions, itemIndex, pagesInFlight: 1 };
		return await readAllPages(this, read, SUBSCRIPTION_LIST);
	}

	private async sendOnce(
		path: string,
		options: Omit<IHttpRequestOptions, 'url'>,
	): Promise<IN8nHttpFullResponse> {
		const { key, decrypted } = await this.sharedCredential();
		const data = decrypted.data as ICredentialDataDecryptedObject;
		const send = async (
			credentialData: ICredentialDataDecryptedObject,
			additional: IAdditionalCredentialOptions,
		) => {
			// Each request hands n8n its own copy, so that n8n 1.x (which renews a refused token by
			// itself, ignoring preAuthenticationRetryStatusCode) tells the credential which token was
			// refused, not one that a concurrent renewal stored meanwhile; a token n8n stored in the
			// copy is then shared with the run's other requests. A token obtained for other fields
			// is left out, so n8n asks for one before it sends anything; the request goes to the
			// Base URL of the fields it is sent with.
			const sent = { ...credentialData, accessToken: usableToken(credentialData) };
			try {
				return (await this.context.helpers.httpRequestWithAuthentication.call(
					this.context,
					CREDENTIAL_TYPE,
					{ ...options, url: `${baseUrlOf(sent)}${path}` },
					{ credentialsDecrypted: { ...decrypted, data: sent }, ...additional },
				)) as IN8nHttpFullResponse;
			} finally {
				const stored = usableToken(sent);
				if (stored !== '' && stored !== usableToken(credentialData))
					credentialData.accessToken = stored;
			}
		};

		const sendRenewingIfRefused = async () => {
			const inProgress = renewals.get(key);
			if (inProgress) {
				const renewed = await this.waitForRenewal(inProgress);
				// A renewal for other fields (the credential was changed since this run read it) is not
				// this run's token.
				if (isBoundTo(renewed, data)) data.accessToken = renewed;
			}
			if (this.renewalFailure !== undefined) throw this.renewalFailure;
			const token = usableToken(data);
			if (token === '') return await this.renewAndSend(key, data, undefined, send);
			let refused: unknown;
			try {
				return await send(data, { preAuthenticationRetryStatusCode: [] });
			} catch (error) {
				refused = error;
			}
			// Only a refused token is worth a renewal; any other failure goes back to the retry loop.
			if (readFailure(refused).status !== 401) throw refused;
			return await this.renewAndSend(key, data, token, send);
		};

		// The run's first call goes alone, so that a missing or expired token is renewed once for
		// the run; runs wait for one another only while one of them renews.
		if (!this.firstCall) {
			this.firstCall = sendRenewingIfRefused();
			return (await this.firstCall) as IN8nHttpFullResponse;
		}
		await this.firstCall.catch(() => undefined);
		return await sendRenewingIfRefused();
	}

	/** A renewal's token; its failure fails this run's remaining requests too, without asking again. */
	private async waitForRenewal(renewal: Promise<string>): Promise<string> {
		const outcome = await renewal.then(
			(token) => ({ token, failure: undefined }),
			(error: unknown) => ({ token: undefined, failure: error }),
		);
		if (outcome.token !== undefined) return outcome.token;
		this.renewalFailure ??= outcome.failure;
		throw outcome.failure;
	}

	/**
	 * Renews the token (one renewal per credential at a time) and sends the request with it. The
	 * stored credential is read first: another run or process may have stored a new token, which
	 * is then used instead of fetching one more. When its fields differ from the run's (a new API
	 * key was saved meanwhile), the run goes on with the credential as stored now, Base URL
	 * included. The renewal works on a copy of the credential, so that no other request ever sees
	 * it without a token; the new token is shared once it exists.
	 */
	private async renewAndSend(
		key: string,
		data: ICredentialDataDecryptedObject,
		refusedToken: string | undefined,
		send: (
			credentialData: ICredentialDataDecryptedObject,
			additional: IAdditionalCredentialOptions,
		) => Promise<IN8nHttpFullResponse>,
	): Promise<IN8nHttpFullResponse> {
		for (let inProgress = renewals.get(key); inProgress; inProgress = renewals.get(key)) {
			const token = await this.waitForRenewal(inProgress);
			if (token === refusedToken) continue;
			// Renewed for the credential as stored now, not as this run read it: read it below.
			if (!isBoundTo(token, data)) break;
			data.accessToken = token;
			return await send(data, {});
		}
		let settle: { resolve: (token: string) => void; reject: (error: unknown) => void } = {
			resolve: () => {},
			reject: () => {},
		};
		const renewal = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
		renewal.catch(() => undefined);
		renewals.set(key, renewal);
		try {
			const fresh: ICredentialDataDecryptedObject = { ...data };
			let response: IN8nHttpFullResponse | undefined;
			let failure: unknown;
			try {
				const stored = await this.context.getCredentials(CREDENTIAL_TYPE);
				if (tokenFingerprint(stored) !== tokenFingerprint(data)) Object.assign(data, stored);
				Object.assign(fresh, stored);
				if (refusedToken !== undefined && fresh.accessToken === refusedToken)
					fresh.accessToken = '';
				response = await send(fresh, {});
			} catch (error) {
				failure = error;
			}
			const token = usableToken(fresh);
			if (token !== '' && token !== refusedToken) {
				data.accessToken = token;
				settle.resolve(token);
			} else {
				this.renewalFailure ??= failure;
				settle.reject(failure);
			}
			if (response) return response;
			throw failure;
		} finally {
			if (renewals.get(key) === renewal) renewals.delete(key);
		}
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

	private async requireHttpsBaseUrl(itemIndex?: number): Promise<void> {
		if (!isHttpsAddress(baseUrlOf(await this.credentials()))) {
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
	}

	private toError(
		failure: HttpFailure,
		request: ServiceRequest,
		attempts: number,
		elapsedMs: number,
		timeoutMs = REQUEST_TIMEOUT_MS,
	) {
		return toNodeApiError(failure, {
			node: this.context.getNode(),
			itemIndex: request.itemIndex,
			subject: request.subject,
			method: request.method,
			attempts,
			elapsedMs,
			timeoutMs,
			maxRetryWaitMs: this.retryPolicy.maxTotalMs,
		});
	}
}
