/**
 * The access token of a node run's requests, and its renewal: the one place that decides when a
 * request needs a new token, and that makes sure one is asked for once.
 *
 * What this relies on in n8n, read in the compiled code of n8n 2.41.1 (n8n-core 2.41.1) and
 * n8n 1.123.81 (n8n-core 1.122.48), the same in both unless said, and run on both engines
 * (npm test, npm run test:engine-1x, npm run test:e2e, npm run test:n8n-1x):
 * 1. httpRequestWithAuthentication runs the credential's preAuthentication before it sends when
 *    the hidden expirable field (accessToken) of the credential object it is handed is exactly
 *    '', stores the token the hook returns, and authenticates the request with it.
 * 2. With ignoreHttpStatusErrors it throws on no status (so renews on none by itself) and gives
 *    status, headers and body of every answer.
 * 3. getCredentials reads the stored credential afresh on every call: there is no cache.
 * 4. At a renewal n8n 2.x stores the credential as stored plus the returned token; n8n 1.x stores
 *    the whole object it was handed. So the object handed for a renewal is the credential as read
 *    from storage just before it: on n8n 1.x, a key saved while the token request runs is the one
 *    change a renewal can still write over.
 * Not relied on: that n8n writes the new token into the object it was handed (both lines do, but
 * undocumented): after a renewal the token is read back from storage.
 */
import type {
	ICredentialDataDecryptedObject,
	IExecuteFunctions,
	IHookFunctions,
	IHttpRequestOptions,
	ILoadOptionsFunctions,
	IN8nHttpFullResponse,
	IPollFunctions,
} from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { TOKEN_REFUSED_STATUS } from './contract';
import { baseUrlOf, holdsUsableToken } from './tokenBinding';

export const CREDENTIAL_TYPE = 'invoicingAssetsApi';

export type ServiceContext =
	| IExecuteFunctions
	| IHookFunctions
	| ILoadOptionsFunctions
	| IPollFunctions;

type Credential = ICredentialDataDecryptedObject;

/** A request as the transport hands it to n8n: everything but the address. */
export type AuthenticatedRequest = Omit<IHttpRequestOptions, 'url'> & {
	ignoreHttpStatusErrors: true;
	returnFullResponse: true;
};

/**
 * The renewal in progress in this n8n process, per credential: it resolves to the credential as
 * stored after it, or rejects with its failure. n8n has no lock around preAuthentication, so
 * requests that all met an expired token would each ask for one; here one renews, the others wait.
 */
const renewals = new Map<string, Promise<Credential>>();

/** The service a credential's requests go to: its Environment and Base URL. */
function serviceOf(credential: Credential): string {
	return JSON.stringify([String(credential.environment ?? ''), baseUrlOf(credential)]);
}

/** One per node run: it reads the credential once and shares its token among the run's requests. */
export class AuthenticatedSender {
	/** The credential as the run's requests are sent with it: read once, replaced after a renewal. */
	private credential?: Promise<Credential>;

	/** The renewal whose result `credential` holds. */
	private followed?: Promise<Credential>;

	private firstRequest?: Promise<unknown>;

	/** A renewal of this run that failed: the run's later requests fail with it, without asking again. */
	private renewalFailure?: unknown;

	/** Which service the run's first request went to: its later requests go there or nowhere. */
	private service?: string;

	constructor(private readonly context: ServiceContext) {}

	/** The credential as the run's requests are sent with it now. */
	async current(): Promise<Credential> {
		this.credential ??= this.readStored();
		return await this.credential;
	}

	/**
	 * Sends `request` to `path` below the credential's Base URL and returns n8n's full response,
	 * whatever its status. A token refused with 401 is renewed once and the request sent once more;
	 * that answer stands.
	 */
	async send(path: string, request: AuthenticatedRequest): Promise<IN8nHttpFullResponse> {
		// The run's first request goes alone, so that a missing or expired token is renewed once
		// for the run; runs wait for one another only while one of them renews.
		if (!this.firstRequest) {
			const first = this.sendRenewingOnce(path, request);
			this.firstRequest = first;
			return await first;
		}
		await this.firstRequest.catch(() => undefined);
		return await this.sendRenewingOnce(path, request);
	}

	private async sendRenewingOnce(
		path: string,
		request: AuthenticatedRequest,
	): Promise<IN8nHttpFullResponse> {
		const inProgress = renewals.get(this.key());
		const credential = inProgress ? await this.awaitRenewal(inProgress) : await this.current();
		if (this.renewalFailure !== undefined) throw this.renewalFailure;
		// A token obtained for other fields (a new key was saved) counts as none.
		const sent = holdsUsableToken(credential)
			? { response: await this.sendWith(credential, path, request), token: credential.accessToken }
			: await this.renewAndSend(undefined, path, request);
		if (sent.response.statusCode !== TOKEN_REFUSED_STATUS) return sent.response;
		return (await this.renewAndSend(sent.token, path, request)).response;
	}

	/**
	 * Sends the request with a token other than `refused`: one that a renewal elsewhere (another
	 * request, run or n8n process) stored meanwhile, else a new one. One renewal per credential
	 * at a time in this process; the others wait for it and read the token it stored.
	 */
	private async renewAndSend(
		refused: unknown,
		path: string,
		request: AuthenticatedRequest,
	): Promise<{ response: IN8nHttpFullResponse; token: unknown }> {
		for (let inProgress = renewals.get(this.key()); inProgress; ) {
			const renewed = await this.awaitRenewal(inProgress);
			if (holdsUsableToken(renewed) && renewed.accessToken !== refused) {
				return {
					response: await this.sendWith(renewed, path, request),
					token: renewed.accessToken,
				};
			}
			inProgress = renewals.get(this.key());
		}
		if (this.renewalFailure !== undefined) throw this.renewalFailure;

		const renewal = this.renew(refused, path, request);
		const stored = renewal.then((outcome) => outcome.stored);
		stored.catch(() => undefined);
		renewals.set(this.key(), stored);
		this.followed = stored;
		this.credential = stored;
		try {
			const outcome = await renewal;
			if (outcome.failure !== undefined) throw outcome.failure;
			return {
				response: outcome.response ?? (await this.sendWith(outcome.stored, path, request)),
				token: outcome.stored.accessToken,
			};
		} finally {
			if (renewals.get(this.key()) === stored) renewals.delete(this.key());
		}
	}

	/**
	 * The credential with a token other than `refused`: as stored, when a renewal elsewhere stored
	 * one; else renewed with the request, and then read back from storage.
	 */
	private async renew(
		refused: unknown,
		path: string,
		request: AuthenticatedRequest,
	): Promise<{ stored: Credential; response?: IN8nHttpFullResponse; failure?: unknown }> {
		const stored = await this.readStored();
		if (holdsUsableToken(stored) && stored.accessToken !== refused) return { stored };
		// The credential as stored now, its token emptied: n8n renews it (and stores what it is
		// handed, on n8n 1.x) before it sends.
		let response: IN8nHttpFullResponse | undefined;
		let failure: unknown;
		try {
			response = await this.sendWith({ ...stored, accessToken: '' }, path, request);
		} catch (error) {
			failure = error;
		}
		const after = await this.readStored();
		if (after.accessToken === stored.accessToken) {
			this.renewalFailure ??= failure ?? this.tokenNotStored();
			throw this.renewalFailure;
		}
		return { stored: after, response, failure };
	}

	/** The credential as stored after `renewal`; its failure is this run's too. */
	private async awaitRenewal(renewal: Promise<Credential>): Promise<Credential> {
		if (this.followed !== renewal) {
			this.followed = renewal;
			// Read in this run's own context, not taken from the run that renewed.
			this.credential = renewal.then(
				async () => await this.readStored(),
				(failure: unknown) => {
					this.renewalFailure ??= failure;
					throw failure;
				},
			);
			this.credential.catch(() => undefined);
		}
		return await this.current();
	}

	private async sendWith(
		credential: Credential,
		path: string,
		request: AuthenticatedRequest,
	): Promise<IN8nHttpFullResponse> {
		const service = serviceOf(credential);
		this.service ??= service;
		if (service !== this.service) throw this.serviceChanged();
		const reference = this.context.getNode().credentials?.[CREDENTIAL_TYPE];
		return (await this.context.helpers.httpRequestWithAuthentication.call(
			this.context,
			CREDENTIAL_TYPE,
			{ ...request, url: `${baseUrlOf(credential)}${path}` },
			{
				credentialsDecrypted: {
					id: reference?.id ?? '',
					name: reference?.name ?? '',
					type: CREDENTIAL_TYPE,
					data: credential,
				},
			},
		)) as IN8nHttpFullResponse;
	}

	private async readStored(): Promise<Credential> {
		return await this.context.getCredentials(CREDENTIAL_TYPE);
	}

	/** The credential's identity in this n8n process. */
	private key(): string {
		const node = this.context.getNode();
		const reference = node.credentials?.[CREDENTIAL_TYPE];
		return reference?.id ?? reference?.name ?? node.id;
	}

	/**
	 * The credential now names another Environment or Base URL than when the run began: going on
	 * would mix two services' records in one output.
	 */
	private serviceChanged(): NodeOperationError {
		return new NodeOperationError(
			this.context.getNode(),
			'The credential’s Environment or Base URL changed while this node ran',
			{
				description: 'Run the node again: it then reads from the service the credential names now.',
			},
		);
	}

	private tokenNotStored(): NodeOperationError {
		return new NodeOperationError(
			this.context.getNode(),
			'n8n did not store the renewed access token',
			{
				description:
					'This n8n release renews credentials differently from those the package was tested with (docs/compatibility.md in its repository); every request would ask for a new token. Please report it.',
			},
		);
	}
}
