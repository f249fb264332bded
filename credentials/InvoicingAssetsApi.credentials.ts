import type {
	IAuthenticate,
	ICredentialDataDecryptedObject,
	ICredentialTestRequest,
	ICredentialType,
	IHttpRequestHelper,
	IN8nHttpFullResponse,
	INodeProperties,
	Icon,
} from 'n8n-workflow';
import { UserError } from 'n8n-workflow';

import {
	expiredApiKeyMessage,
	isApiKeyExpired,
	readApiKeyExpiry,
} from '../nodes/InvoicingAssets/shared/apiKeyExpiry';
import {
	EXPIRED_KEY_ERROR,
	INVALID_SCOPE_ERROR,
	JSON_MEDIA_TYPE,
	REJECTED_CLIENT_ERRORS,
	SCOPE_SUFFIX,
	GRANT_PATH,
	isHttpsAddress,
	TOKEN_REQUEST_IS_HARMLESS_TO_REPEAT,
	paths,
	tokenRequestForm,
} from '../nodes/InvoicingAssets/transport/contract';
import { triedText } from '../nodes/InvoicingAssets/transport/errors';
import { KnownSecrets } from '../nodes/InvoicingAssets/transport/redaction';
import { readAccessToken, readIdentityError } from '../nodes/InvoicingAssets/transport/responses';
import { sendWithRetries } from '../nodes/InvoicingAssets/transport/retry';
import {
	baseUrlOf,
	bindToken,
	clientIdOf,
	tokenFor,
	withoutTrailingSlashes,
} from '../nodes/InvoicingAssets/transport/tokenBinding';
import { renewalBoundsOf } from '../nodes/InvoicingAssets/transport/tokenRenewal';

function credentialError(message: string, description: string): UserError {
	return new UserError(message, { description });
}

function requireHttps(url: string, field: string, why: string, example: string) {
	if (!isHttpsAddress(url)) {
		throw credentialError(
			`The ${field} must start with https://`,
			`${why}, so it must be protected by TLS. Enter the address the identity portal gives, e.g. ${example}.`,
		);
	}
}

/**
 * Sent in place of a token when the credential holds none usable for its current fields (the
 * stored one was obtained for another key or address). The service refuses it with a 401, on
 * which n8n asks preAuthentication for a token and sends the request again: so the HTTP Request
 * node with this credential renews too, and the old token never leaves n8n.
 */
const NO_USABLE_TOKEN = 'none';

/**
 * Asks the identity service for an access token with the credential's client ID and secret; a
 * refusal is a UserError that says which field to fix.
 */
async function requestToken(
	helper: IHttpRequestHelper,
	credentials: ICredentialDataDecryptedObject,
): Promise<string> {
	const scope = String(credentials.scope ?? '').trim();
	if (!scope.endsWith(SCOPE_SUFFIX)) {
		throw credentialError(
			`The Scope must end with ${SCOPE_SUFFIX}`,
			`Copy the API resource identifier from the identity portal and add ${SCOPE_SUFFIX} at its end, for example "https://tenant.onmicrosoft.com/data-service${SCOPE_SUFFIX}".`,
		);
	}

	const expiresOn = readApiKeyExpiry(credentials.keyExpiresOn);
	if (expiresOn && isApiKeyExpired(expiresOn)) {
		const { message, description } = expiredApiKeyMessage(expiresOn);
		throw credentialError(message, description);
	}

	const identityUrl = withoutTrailingSlashes(credentials.identityUrl);
	// The client secret goes to the identity service and the token to the Data Service.
	requireHttps(
		identityUrl,
		'Identity Service URL',
		'The client secret is sent to this address',
		'https://login.example.com/tenant.onmicrosoft.com',
	);
	requireHttps(
		baseUrlOf(credentials),
		'Base URL',
		'Every request carries the access token to this address',
		'https://api.example.com',
	);
	const form = tokenRequestForm(
		clientIdOf(credentials),
		String(credentials.clientSecret ?? ''),
		scope,
	);

	// Retried like a read (asking for a token twice is harmless) by the one retry loop, within the
	// deadline of the request the renewal serves; a refused client ID or secret is an answer, not
	// a fault, and is not retried.
	const bounds = renewalBoundsOf(credentials);
	const outcome = await sendWithRetries(
		async (timeout) =>
			(await helper.helpers.httpRequest({
				method: 'POST',
				url: `${identityUrl}${GRANT_PATH}`,
				headers: {
					'Content-Type': 'application/x-www-form-urlencoded',
					Accept: JSON_MEDIA_TYPE,
				},
				body: new URLSearchParams({ ...form }).toString(),
				returnFullResponse: true,
				ignoreHttpStatusErrors: true,
				timeout,
				abortSignal: bounds.signal,
				// A redirect would carry the client secret to another address.
				disableFollowRedirect: true,
			})) as IN8nHttpFullResponse,
		{ method: 'POST', harmlessToRepeat: TOKEN_REQUEST_IS_HARMLESS_TO_REPEAT, ...bounds },
	);
	const retried = triedText(outcome.attempts, outcome.elapsedMs);
	// The identity service may quote the form it was sent, secret included (and a token stored).
	const secrets = new KnownSecrets([credentials.clientSecret, tokenFor(credentials)]);
	const { response } = outcome;
	if (!response) {
		// The request error carries the form, secret included: only its message was read.
		throw credentialError(
			'The identity service could not be reached',
			`Check the Identity Service URL (${identityUrl}). The connection failed: ${secrets.redact(String(outcome.failure?.message))}.${retried}`,
		);
	}

	if (response.statusCode >= 200 && response.statusCode < 300) {
		const accessToken = readAccessToken(response.body);
		if (!accessToken) {
			throw credentialError(
				'The identity service answered without an access token',
				'The token response has no "accessToken" field. Check that the Identity Service URL points at the identity service of the Data Service, not at another address.',
			);
		}
		return accessToken;
	}

	const identityError = readIdentityError(response.body);
	if (identityError?.error === EXPIRED_KEY_ERROR) {
		const { message, description } = expiredApiKeyMessage(expiresOn);
		throw credentialError(message, description);
	}
	if (identityError && REJECTED_CLIENT_ERRORS.includes(identityError.error)) {
		throw credentialError(
			'The identity service rejected the client ID or secret',
			'Check the Client ID and Client Secret of the API key, and that the key belongs to the chosen environment. The secret is shown only once, at creation; if it is lost, create a new key in the identity portal.',
		);
	}
	if (identityError?.error === INVALID_SCOPE_ERROR) {
		throw credentialError(
			'The identity service does not accept the Scope',
			`Use the API resource identifier exactly as the identity portal gives it, ending with ${SCOPE_SUFFIX}.`,
		);
	}
	const said =
		identityError?.error_description ??
		identityError?.error ??
		'Check the Identity Service URL, the Scope and the API key.';
	throw credentialError(
		`The identity service refused the token request (HTTP ${response.statusCode})`,
		`${secrets.redact(said)}${retried}`,
	);
}

export class InvoicingAssetsApi implements ICredentialType {
	name = 'invoicingAssetsApi';

	displayName = 'Invoicing & Assets API';

	icon: Icon = {
		light: 'file:../nodes/InvoicingAssets/invoicingAssets.svg',
		dark: 'file:../nodes/InvoicingAssets/invoicingAssets.dark.svg',
	};

	documentationUrl =
		'https://github.com/invoicing-assets/n8n-nodes-invoicing-assets?tab=readme-ov-file#credentials';

	properties: INodeProperties[] = [
		{
			displayName: 'Environment',
			name: 'environment',
			type: 'options',
			options: [
				{
					name: 'Production',
					value: 'production',
					description: 'A key from the "API Keys" tab of the identity portal',
				},
				{
					name: 'Sandbox',
					value: 'sandbox',
					description:
						'A key from the "Sandbox API Keys" tab, for testing without affecting production',
				},
			],
			default: 'production',
			description:
				'The identity-portal tab the API key was created in. Production and sandbox keys are separate and each works only against its own Base URL.',
		},
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			default: '',
			required: true,
			placeholder: 'e.g. https://api.example.com',
			description:
				'The address of the Data Service for the chosen environment, starting with https://',
		},
		{
			displayName: 'Identity Service URL',
			name: 'identityUrl',
			type: 'string',
			default: '',
			required: true,
			placeholder: 'e.g. https://login.example.com/tenant.onmicrosoft.com',
			description: `The identity service's address. The token is requested from this address followed by ${GRANT_PATH}.`,
		},
		{
			displayName: 'Scope',
			name: 'scope',
			type: 'string',
			default: '',
			required: true,
			placeholder: `e.g. https://tenant.onmicrosoft.com/data-service${SCOPE_SUFFIX}`,
			description: `The API resource identifier given by the identity portal. It ends with ${SCOPE_SUFFIX}.`,
		},
		{
			displayName: 'Client ID',
			name: 'clientId',
			type: 'string',
			default: '',
			required: true,
			description: 'Shown in the confirmation dialog when the API key was created',
		},
		{
			displayName: 'Client Secret',
			name: 'clientSecret',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			description:
				'Shown only once, when the API key was created. The provider cannot show it again; if it is lost, create a new key.',
		},
		{
			displayName: 'API Key Expires On',
			name: 'keyExpiresOn',
			type: 'dateTime',
			default: '',
			description:
				'The expiry date chosen when the key was created (at most twelve months later). It cannot be extended. Setting it lets the nodes warn you 30 days ahead and explain an expired key clearly.',
		},
		{
			displayName: 'Access Token',
			name: 'accessToken',
			type: 'hidden',
			typeOptions: { expirable: true, password: true },
			default: '',
		},
	];

	// n8n runs this when the token field is empty (the transport empties it to renew, within the
	// bounds of transport/tokenRenewal.ts) and after a request of n8n's own (e.g. the HTTP Request
	// node) was refused; it stores the token returned.
	async preAuthentication(this: IHttpRequestHelper, credentials: ICredentialDataDecryptedObject) {
		return { accessToken: bindToken(await requestToken(this, credentials), credentials) };
	}

	// A function rather than a generic expression: it runs for every request, and evaluating an
	// expression there costs measurable CPU at hundreds of requests per second.
	authenticate: IAuthenticate = async (credentials, requestOptions) => ({
		...requestOptions,
		headers: {
			...requestOptions.headers,
			Authorization: `Bearer ${tokenFor(credentials) ?? NO_USABLE_TOKEN}`,
		},
	});

	test: ICredentialTestRequest = {
		request: {
			baseURL: '={{$credentials.baseUrl.trim().replace(/\\/+$/, "")}}',
			url: paths.subscriptions,
			method: 'GET',
			headers: { Accept: JSON_MEDIA_TYPE },
		},
	};
}
