import type { ICredentialDataDecryptedObject, IHttpRequestOptions } from 'n8n-workflow';

import { InvoicingAssetsApi } from '../../../credentials/InvoicingAssetsApi.credentials';
import {
	bindToken,
	tokenFingerprint,
	tokenFor,
} from '../../../nodes/InvoicingAssets/transport/tokenBinding';

const credential: ICredentialDataDecryptedObject = {
	environment: 'production',
	baseUrl: 'https://api.example.com',
	identityUrl: 'https://login.example.com/tenant',
	scope: 'api://invoicing/.default',
	clientId: 'client-a',
	clientSecret: 'secret-a',
	keyExpiresOn: '',
};
const TOKEN = 'token-of-client-a';
const stored = { ...credential, accessToken: bindToken(TOKEN, credential) };

test('a token is used with the fields it was obtained for, whatever their spelling of spaces and trailing slashes', () => {
	expect(tokenFor(stored)).toBe(TOKEN);
	expect(
		tokenFor({
			...stored,
			baseUrl: ' https://api.example.com/ ',
			identityUrl: 'https://login.example.com/tenant//',
			clientId: ' client-a',
		}),
	).toBe(TOKEN);
});

test.each([
	['environment', 'sandbox'],
	['baseUrl', 'https://sandbox.example.com'],
	['identityUrl', 'https://login.example.com/other'],
	['scope', 'api://other/.default'],
	['clientId', 'client-b'],
])('a token is not used once %s changed', (field, value) => {
	expect(tokenFor({ ...stored, [field]: value })).toBeUndefined();
});

test('the fingerprint leaves the secret and the expiry date out', () => {
	expect(
		tokenFingerprint({ ...credential, clientSecret: 'other', keyExpiresOn: '2027-01-01' }),
	).toBe(tokenFingerprint(credential));
});

test.each([
	['none', ''],
	['a token stored without a fingerprint (older versions)', TOKEN],
	['a fingerprint without a token', `${tokenFingerprint(credential)}.`],
	['a JWT-like token', 'eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl'],
])('%s is no usable token', (_name, value) => {
	expect(tokenFor({ ...credential, accessToken: value })).toBeUndefined();
});

describe('the credential’s authenticate', () => {
	const authenticate = new InvoicingAssetsApi().authenticate as (
		credentials: ICredentialDataDecryptedObject,
		options: IHttpRequestOptions,
	) => Promise<IHttpRequestOptions>;
	const request: IHttpRequestOptions = { url: 'https://api.example.com/x', headers: { A: '1' } };

	test('sends the token obtained for the credential’s fields', async () => {
		const sent = await authenticate(stored, request);
		expect(sent.headers).toEqual({ A: '1', Authorization: `Bearer ${TOKEN}` });
	});

	test('sends no old token after the key changed, only a placeholder the service refuses', async () => {
		const sent = await authenticate({ ...stored, clientId: 'client-b' }, request);
		expect(sent.headers?.Authorization).toBe('Bearer none');
		expect(JSON.stringify(sent).includes(TOKEN)).toBe(false);
	});
});
