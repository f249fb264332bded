/**
 * The renewal relies on what transport/tokenRenewal.ts names, and on nothing else: here an n8n
 * that renews when the token field is '' and stores the result (as 2.x or as 1.x does), but never
 * writes the new token into the object it was handed, the one thing both lines do undocumented.
 */
import type {
	ICredentialDataDecryptedObject,
	IExecuteFunctions,
	IHttpRequestOptions,
	IN8nHttpFullResponse,
} from 'n8n-workflow';

import { ServiceClient } from '../../../nodes/InvoicingAssets/transport';
import { bindToken, tokenFor } from '../../../nodes/InvoicingAssets/transport/tokenBinding';
import { actionNode } from '../fixtures';

type Stores = 'stored plus token (2.x)' | 'the handed object (1.x)' | 'nothing';

/** A fake n8n and service: the stored token t0 has expired; the service accepts only the newest token. */
function fakeN8n(stores: Stores) {
	const fields = { baseUrl: 'https://api.example.com', clientId: 'client' };
	let stored: ICredentialDataDecryptedObject = { ...fields, accessToken: bindToken('t0', fields) };
	let issued = 0;
	const sent: Array<string | undefined> = [];
	const context = {
		getNode: () => actionNode,
		getCredentials: async () => structuredClone(stored),
		helpers: {
			httpRequestWithAuthentication: async (
				_type: string,
				options: IHttpRequestOptions,
				additional: { credentialsDecrypted: { data: ICredentialDataDecryptedObject } },
			): Promise<IN8nHttpFullResponse> => {
				const handed = additional.credentialsDecrypted.data;
				let token = tokenFor(handed);
				if (handed.accessToken === '') {
					issued += 1;
					const renewed = bindToken(`t${issued}`, handed);
					if (stores === 'stored plus token (2.x)') stored = { ...stored, accessToken: renewed };
					if (stores === 'the handed object (1.x)') stored = { ...handed, accessToken: renewed };
					token = `t${issued}`;
				}
				sent.push(token);
				const status = issued > 0 && token === `t${issued}` ? 200 : 401;
				expect(options.ignoreHttpStatusErrors).toBe(true);
				return { statusCode: status, headers: {}, body: status === 200 ? { ok: true } : null };
			},
		},
	} as unknown as IExecuteFunctions;
	return {
		context,
		sent,
		issued: () => issued,
		saveNewSecret: () => (stored = { ...stored, clientSecret: 'new-secret' }),
		stored: () => stored,
	};
}

test.each<Stores>(['stored plus token (2.x)', 'the handed object (1.x)'])(
	'n8n storing %s: a refused token is renewed once, and the run goes on with the token read back from storage',
	async (stores) => {
		const n8n = fakeN8n(stores);
		const client = new ServiceClient(n8n.context);
		for (let request = 0; request < 3; request++) {
			await client.request({ method: 'GET', path: '/x' });
		}
		await Promise.all(
			[1, 2, 3].map(async () => await client.request({ method: 'GET', path: '/x' })),
		);
		expect(n8n.issued()).toBe(1);
		expect(n8n.sent).toEqual(['t0', 't1', 't1', 't1', 't1', 't1', 't1']);
	},
);

test('on a renewal n8n 1.x stores the credential as stored now, not as the run read it', async () => {
	const n8n = fakeN8n('the handed object (1.x)');
	const client = new ServiceClient(n8n.context);
	expect((await client.credentials()).clientSecret).toBeUndefined();
	n8n.saveNewSecret();
	await client.request({ method: 'GET', path: '/x' });
	expect(n8n.issued()).toBe(1);
	expect(n8n.stored().clientSecret).toBe('new-secret');
});

test('an n8n that did not store the renewed token is a clear error, not a renewal on every request', async () => {
	const n8n = fakeN8n('nothing');
	const client = new ServiceClient(n8n.context);
	await expect(client.request({ method: 'GET', path: '/x' })).rejects.toThrow(
		'n8n did not store the renewed access token',
	);
	await expect(client.request({ method: 'GET', path: '/x' })).rejects.toThrow(
		'n8n did not store the renewed access token',
	);
	expect(n8n.issued()).toBe(1);
});
