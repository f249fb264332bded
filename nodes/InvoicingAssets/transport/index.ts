import type {
	ICredentialDataDecryptedObject,
	IDataObject,
	IExecuteFunctions,
	IHttpRequestMethods,
	IN8nHttpFullResponse,
	INode,
} from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { JSON_MEDIA_TYPE, paths, type Subscription } from './contract';
import { toNodeApiError } from './errors';
import { readDeliveryKey } from './notificationUrl';
import { readAllPages, type ListForm } from './pageReader';
import { KnownSecrets } from './redaction';
import { readRecord, readSubscriptionListPage } from './responses';
import { sendWithRetries } from './retry';
import { AuthenticatedSender, type ServiceContext } from './tokenRenewal';

export { CREDENTIAL_TYPE, type ServiceContext } from './tokenRenewal';

export interface ServiceRequest {
	method: IHttpRequestMethods;
	path: string;
	qs?: IDataObject;
	body?: IDataObject;
	/** Names the record in a "not found" message, e.g. "Invoice 'INV-1'". */
	subject?: string;
	itemIndex?: number;
	/**
	 * Epoch ms by which the request should be done (e.g. a poll's budget): no retry, and no token
	 * renewal, waits past it, and an attempt is given up DEADLINE_GRACE_MS (retry.ts) after it.
	 */
	deadline?: number;
}

const SUBSCRIPTION_LIST: ListForm<Subscription> = {
	readPage: readSubscriptionListPage,
	unreadable: {
		message: 'The service’s subscription list has a form the node cannot read; please report this',
		description: (page) =>
			`Expected a JSON array of subscriptions, or pages of the form {"items": [...], "page", "pageSize", "totalItems"}, each subscription with an "id"; the answer for page ${page} is neither. Rather than take an unreadable list for an empty one (for a trigger: and subscribe twice), the node stops. The package’s assumptions about the service are listed in docs/service-contract.md in its repository.`,
	},
};

/** One client per node run: it reads the credential once and shares one token. */
export class ServiceClient {
	private readonly sender: AuthenticatedSender;

	/**
	 * The run's secrets, hidden in every error it throws: the credential's (tokenRenewal.ts) and
	 * the delivery keys of the subscriptions it sends and lists.
	 */
	private readonly secrets = new KnownSecrets();

	constructor(private readonly context: ServiceContext) {
		this.sender = new AuthenticatedSender(context, this.secrets);
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
		const record = readRecord<T>(await this.request({ ...request, method: 'GET' }));
		if (record !== undefined) return record;
		throw new NodeOperationError(
			this.context.getNode(),
			'The service answered a record request with an unexpected shape',
			{
				description: `${request.subject} did not come back as a JSON object. The Data Service’s answer format may have changed; please report this.`,
				itemIndex: request.itemIndex,
			},
		);
	}

	/**
	 * Every subscription of the API key (or its first `limit`), in either form of SubscriptionList
	 * (contract.ts). An answer that cannot be read is an error, never an empty list: taken for
	 * one, the trigger would subscribe a second time.
	 */
	async listSubscriptions(
		read: { itemIndex?: number; limit?: number } = {},
	): Promise<Subscription[]> {
		const subscriptions = await readAllPages<Subscription>(
			this,
			{ path: paths.subscriptions, ...read },
			SUBSCRIPTION_LIST,
		);
		for (const { notificationUrl } of subscriptions) this.learnDeliveryKey(notificationUrl);
		return subscriptions;
	}

	async requestFull(request: ServiceRequest): Promise<IN8nHttpFullResponse> {
		this.learnDeliveryKey(request.body?.notificationUrl);
		const bounds = {
			deadline: request.deadline,
			signal: (this.context as Partial<IExecuteFunctions>).getExecutionCancelSignal?.(),
		};
		// Every answer comes back as it is, headers included (n8n 1.x drops them from the errors
		// it throws): the node reads its status itself.
		const send = async (timeout: number) =>
			await this.sender.send(
				request.path,
				{
					method: request.method,
					qs: request.qs,
					body: request.body,
					headers: { Accept: JSON_MEDIA_TYPE },
					json: true,
					returnFullResponse: true,
					ignoreHttpStatusErrors: true,
					timeout,
					// The service answers in place; a redirect would carry the bearer token to another address.
					disableFollowRedirect: true,
				},
				bounds,
			);
		const outcome = await sendWithRetries(send, { method: request.method, ...bounds });
		if (outcome.failure === undefined) return outcome.response;
		throw toNodeApiError(outcome.failure, {
			node: this.context.getNode(),
			itemIndex: request.itemIndex,
			subject: request.subject,
			method: request.method,
			attempts: outcome.attempts,
			elapsedMs: outcome.elapsedMs,
			secrets: this.secrets,
		});
	}

	private learnDeliveryKey(notificationUrl: unknown) {
		if (typeof notificationUrl === 'string') this.secrets.add(readDeliveryKey(notificationUrl));
	}

	/** The node this client runs for, to name in errors. */
	getNode(): INode {
		return this.context.getNode();
	}

	/** The credential as the run's requests are sent with it now. */
	async credentials(): Promise<ICredentialDataDecryptedObject> {
		return await this.sender.current();
	}
}
