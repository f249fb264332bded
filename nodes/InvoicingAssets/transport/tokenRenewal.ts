/**
 * The access token of a node run's requests, and its renewal. A run (one ServiceClient) reads
 * the credential once, sends its first request alone, and renews one token at a time: on a 401,
 * one renewal and one resend. Runs share nothing: when many meet the hourly expiry, each may ask
 * for a token once. A renewal keeps to the deadline and cancel signal of the request it serves.
 *
 * What this relies on in n8n, read in the compiled code of n8n-core 2.41.1 and 1.122.48 (the
 * same in both) and run on both engines (npm test, npm run test:engine-1x, npm run test:e2e):
 * 1. httpRequestWithAuthentication, handed a credential object whose hidden expirable field
 *    (accessToken) is '', calls the credential's preAuthentication with that very object, stores
 *    the token it returns, assigns it into the object, and sends the request with it.
 * 2. With ignoreHttpStatusErrors it throws on no status (so renews on none by itself) and gives
 *    status, headers and body of every answer.
 * 3. n8n stores a credential as JSON, so a symbol-keyed property of that object is never stored.
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
import type { KnownSecrets } from './redaction';
import type { RetryBounds } from './retry';
import { baseUrlOf, tokenFor } from './tokenBinding';

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

/** Where a renewal leaves the bounds of the request it serves for the credential's token request. */
const RENEWAL_BOUNDS = Symbol.for('n8n-nodes-invoicing-assets.renewalBounds');

/** The bounds a renewal handed the credential's preAuthentication; none when n8n calls it by itself. */
export function renewalBoundsOf(credential: Credential): RetryBounds {
	return (credential as { [RENEWAL_BOUNDS]?: RetryBounds })[RENEWAL_BOUNDS] ?? {};
}

/** One per node run: it reads the credential once and shares its token among the run's requests. */
export class AuthenticatedSender {
	/**
	 * The credential the run's requests are sent with: as read, then as its last renewal left it.
	 * A renewal that failed fails the run's later requests too, without asking again.
	 */
	private credential?: Promise<Credential>;

	private firstRequest?: Promise<unknown>;

	/** `secrets` learns the client secret and every token the run sends, the refused one too. */
	constructor(
		private readonly context: ServiceContext,
		private readonly secrets: KnownSecrets,
	) {}

	/** The credential as the run's requests are sent with it now. */
	async current(): Promise<Credential> {
		this.credential ??= this.context.getCredentials(CREDENTIAL_TYPE);
		return await this.credential;
	}

	/**
	 * Sends `request` to `path` below the credential's Base URL and returns n8n's full response,
	 * whatever its status. A token refused with 401 is renewed once and the request sent once more;
	 * that answer stands.
	 */
	async send(
		path: string,
		request: AuthenticatedRequest,
		bounds: RetryBounds,
	): Promise<IN8nHttpFullResponse> {
		// The run's first request goes alone, so that a missing or expired token is renewed once.
		if (!this.firstRequest) {
			const first = this.sendRenewingOnce(path, request, bounds);
			this.firstRequest = first;
			return await first;
		}
		await this.firstRequest.catch(() => undefined);
		return await this.sendRenewingOnce(path, request, bounds);
	}

	private async sendRenewingOnce(
		path: string,
		request: AuthenticatedRequest,
		bounds: RetryBounds,
	): Promise<IN8nHttpFullResponse> {
		const credential = await this.current();
		// A token obtained for other fields (a new key was saved) counts as none.
		if (tokenFor(credential) === undefined)
			return await this.renewAndSend(credential, path, request, bounds);
		const response = await this.sendWith(credential, path, request);
		if (response.statusCode !== TOKEN_REFUSED_STATUS) return response;
		return await this.renewAndSend(credential, path, request, bounds);
	}

	/**
	 * Sends the request with a newer credential than `refused`: the one a renewal of this run left
	 * meanwhile, else a renewed one.
	 */
	private async renewAndSend(
		refused: Credential,
		path: string,
		request: AuthenticatedRequest,
		bounds: RetryBounds,
	): Promise<IN8nHttpFullResponse> {
		const current = await this.current();
		if (current !== refused) return await this.sendWith(current, path, request);
		const renewal = this.renew(refused, path, request, bounds);
		this.credential = renewal.then(({ credential, failure }) => {
			if (failure !== undefined && tokenFor(credential) === undefined) throw failure;
			return credential;
		});
		this.credential.catch(() => undefined);
		const { response, failure } = await renewal;
		if (response === undefined) throw failure;
		return response;
	}

	/**
	 * Sends the request with the credential as stored now (a key saved since the run began is the
	 * one renewed for) and its token emptied: n8n has preAuthentication ask for a token within
	 * `bounds`, stores it, and sends. A credential now of another Environment or Base URL fails the
	 * run: going on would mix two services' records in one output.
	 */
	private async renew(
		refused: Credential,
		path: string,
		request: AuthenticatedRequest,
		bounds: RetryBounds,
	): Promise<{ credential: Credential; response?: IN8nHttpFullResponse; failure?: unknown }> {
		const stored = await this.context.getCredentials(CREDENTIAL_TYPE);
		if (stored.environment !== refused.environment || baseUrlOf(stored) !== baseUrlOf(refused)) {
			throw new NodeOperationError(
				this.context.getNode(),
				'The credential’s Environment or Base URL changed while this node ran',
				{
					description:
						'Run the node again: it then reads from the service the credential names now.',
				},
			);
		}
		const credential: Credential = { ...stored, accessToken: '' };
		Object.defineProperty(credential, RENEWAL_BOUNDS, { value: bounds });
		try {
			return { credential, response: await this.sendWith(credential, path, request) };
		} catch (failure) {
			return { credential, failure };
		}
	}

	private async sendWith(
		credential: Credential,
		path: string,
		request: AuthenticatedRequest,
	): Promise<IN8nHttpFullResponse> {
		const reference = this.context.getNode().credentials?.[CREDENTIAL_TYPE];
		try {
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
		} finally {
			// The token sent, or the one a renewal left in the credential (fact 1 above).
			this.secrets.add(credential.clientSecret, tokenFor(credential));
		}
	}
}
