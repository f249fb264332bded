import type {
	ICredentialDataDecryptedObject,
	IDataObject,
	IExecuteFunctions,
	IHttpRequestMethods,
	IN8nHttpFullResponse,
	INode,
} from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { isHttpsAddress, JSON_MEDIA_TYPE } from './contract';
import { toNodeApiError, type HttpFailure } from './errors';
import { readRecord } from './responses';
import {
	DEFAULT_RETRY_POLICY,
	sendWithRetries,
	waitUnlessCancelled,
	type RetryPolicy,
} from './retry';
import { baseUrlOf } from './tokenBinding';
import {
	AuthenticatedSender,
	type AuthenticatedRequest,
	type ServiceContext,
} from './tokenRenewal';

export { CREDENTIAL_TYPE, type ServiceContext } from './tokenRenewal';

export const REQUEST_TIMEOUT_MS = 30_000;

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

/** One client per node run: it reads the credential once and shares one token. */
export class ServiceClient {
	private readonly sender: AuthenticatedSender;

	constructor(
		private readonly context: ServiceContext,
		private readonly retryPolicy: RetryPolicy = DEFAULT_RETRY_POLICY,
	) {
		this.sender = new AuthenticatedSender(context);
	}

	/** Sends a request with retries and returns the parsed body; failures become NodeApiErrors. */
	async request<T = unknown>(request: ServiceRequest): Promise<T> {
		return (await this.requestFull(request)).body as T;
	}

	/**
	 * Gets one record (`subject` names it). An answer that is not a record is an error, never an
	 * item: a text or an empty body passed on would be output as if it were the record.
	 */
	async getRecord<T>(request: Omit<ServiceRequest, 'method'> & { subject: string }): Promise<T> {
		const body = await this.request({ ...request, method: 'GET' });
		const record = readRecord<T>(body);
		if (record !== undefined) return record;
		const empty = body === undefined || body === null || String(body).trim() === '';
		const came = Array.isArray(body)
			? 'a list'
			: empty
				? 'an empty answer'
				: typeof body === 'string'
					? 'text'
					: `a JSON ${typeof body}`;
		throw new NodeOperationError(
			this.context.getNode(),
			'The service answered a record request with an unexpected shape',
			{
				description: `${request.subject} came back as ${came}, not as a JSON object. The Data Service’s answer format may have changed; please report this.`,
				itemIndex: request.itemIndex,
			},
		);
	}

	async requestFull(request: ServiceRequest): Promise<IN8nHttpFullResponse> {
		await this.requireHttpsBaseUrl(request.itemIndex);
		// Every answer comes back as it is, headers included (n8n 1.x drops them from the errors
		// it throws): the node reads its status itself.
		const options: AuthenticatedRequest = {
			method: request.method,
			qs: request.qs,
			body: request.body,
			headers: { Accept: JSON_MEDIA_TYPE },
			json: true,
			returnFullResponse: true,
			ignoreHttpStatusErrors: true,
			timeout: this.timeoutBefore(request.deadline),
			// The service answers in place; a redirect would carry the bearer token to another address.
			disableFollowRedirect: true,
		};
		const outcome = await sendWithRetries(
			async () => await this.sender.send(request.path, options),
			{
				method: request.method,
				policy: this.retryPolicy,
				// No retry waits past the deadline; the next attempt ends by it.
				wait: async (ms) => {
					if (request.deadline !== undefined && Date.now() + ms >= request.deadline) return false;
					options.timeout = this.timeoutBefore(request.deadline, ms);
					const execution = this.context as Partial<IExecuteFunctions>;
					return await waitUnlessCancelled(ms, execution.getExecutionCancelSignal?.());
				},
			},
		);
		if (outcome.failure === undefined) return outcome.response;
		throw this.toError(
			outcome.failure,
			request,
			outcome.attempts,
			outcome.elapsedMs,
			options.timeout,
		);
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

	/** The node this client runs for, to name in errors. */
	getNode(): INode {
		return this.context.getNode();
	}

	/** The credential as the run's requests are sent with it now. */
	async credentials(): Promise<ICredentialDataDecryptedObject> {
		return await this.sender.current();
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
