/**
 * The package's credential in a real n8n: created through the public API, and changed the way
 * n8n's editor does it (n8n 2.41.0's and 1.123.43's editor alike): load the credential with its
 * data (n8n redacts password fields, the hidden token included), fill in the defaults, apply the
 * user's changes, save what `NodeHelpers.getNodeParameters` keeps of it, then test the credential
 * with the full form, as the editor does after every save of a testable credential. n8n restores
 * the redacted values from what it stored, so the hidden token stays.
 */
import type {
	ICredentialDataDecryptedObject,
	INodeParameters,
	INodeProperties,
} from 'n8n-workflow';
import { NodeHelpers } from 'n8n-workflow';

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

interface StoredCredential {
	id: string;
	name: string;
	type: string;
	data: ICredentialDataDecryptedObject;
	isGlobal?: boolean;
	isResolvable?: boolean;
}

/** Saves `changes` into credential `id` as n8n's editor does; returns the credential test's answer. */
export async function saveCredentialInEditor(
	n8n: N8nInstance,
	id: string,
	changes: ICredentialDataDecryptedObject,
): Promise<{ status: string; message: string }> {
	const loaded = await n8n.rest<{ data: StoredCredential }>(
		'GET',
		`/credentials/${id}?includeData=true`,
	);
	if (loaded.status !== 200) throw new Error(`credential ${id}: ${loaded.status} ${loaded.text}`);
	const credential = loaded.body.data;
	const types = await n8n.signedIn<Array<{ name: string; properties: INodeProperties[] }>>(
		'GET',
		'/types/credentials.json',
	);
	const properties = types.body.find((type) => type.name === credential.type)?.properties;
	if (!properties) throw new Error(`n8n does not describe the credential type ${credential.type}`);

	// The form: the loaded values without empty ones, each property's default where none is set.
	const form: ICredentialDataDecryptedObject = Object.fromEntries(
		Object.entries(credential.data).filter(([, value]) => value !== ''),
	);
	for (const property of properties) {
		if (!(property.name in form)) {
			form[property.name] = property.default as ICredentialDataDecryptedObject[string];
		}
	}
	Object.assign(form, changes);

	const data = NodeHelpers.getNodeParameters(
		properties,
		form as INodeParameters,
		false,
		false,
		null,
		null,
	);
	const details = {
		id,
		name: credential.name,
		type: credential.type,
		isGlobal: credential.isGlobal ?? false,
		isResolvable: credential.isResolvable ?? false,
	};
	const saved = await n8n.rest('PATCH', `/credentials/${id}`, { ...details, data });
	if (saved.status !== 200)
		throw new Error(`saving credential ${id}: ${saved.status} ${saved.text}`);
	const tested = await n8n.rest<{ data: { status: string; message: string } }>(
		'POST',
		'/credentials/test',
		{ credentials: { ...details, data: form } },
	);
	if (tested.status !== 200)
		throw new Error(`testing credential ${id}: ${tested.status} ${tested.text}`);
	return tested.body.data;
}
