/** The package's credential in a real n8n, created through the public API. */
import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import { credentialData } from '../harness/test-data';
import type { ClientRecord, Simulator } from '../simulator';
import type { N8nInstance } from './instance';

export const CREDENTIAL_TYPE = 'invoicingAssetsApi';

export interface CredentialReference {
	id: string;
	name: string;
}

/**
 * Creates the package's credential through n8n's public API, as a user enters it for `client`
 * (by default the simulator's own key). `data` replaces fields, e.g. a wrong secret, or adds what
 * a release asks for (`N8nRelease.credentialDataExtras`).
 */
export async function createCredential(
	n8n: N8nInstance,
	sim: Simulator,
	name: string,
	{ client, data = {} }: { client?: ClientRecord; data?: ICredentialDataDecryptedObject } = {},
): Promise<CredentialReference> {
	const created = await n8n.api<{ id: string; name: string }>('POST', '/credentials', {
		name,
		type: CREDENTIAL_TYPE,
		data: { ...credentialData(sim, client), ...data },
	});
	if (created.status !== 200) throw new Error(`credential: ${created.status} ${created.text}`);
	return { id: created.body.id, name: created.body.name };
}
