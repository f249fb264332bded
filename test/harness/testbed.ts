import type { ICredentialDataDecryptedObject, INodeCredentialsDetails } from 'n8n-workflow';

import {
	startSimulator,
	type ClientRecord,
	type Simulator,
	type SimulatorOptions,
} from '../simulator';
import { credentialData } from './test-data';
import { Harness } from './workflow';

/**
 * A new API key entered in a stored credential as n8n's editor saves it: Client ID and Client
 * Secret change, the hidden token stays.
 */
export function enterKeyAsEditor(
	harness: Harness,
	credential: INodeCredentialsDetails,
	key: ClientRecord,
) {
	harness.credentials.edit(credential.id ?? '', {
		clientId: key.clientId,
		clientSecret: key.clientSecret,
	});
}

/**
 * The credential a user would enter for this simulator client, as n8n stores it: the fields left
 * empty (Key Expires On, the hidden token) are stored as empty strings.
 */
export function credentialFor(
	sim: Simulator,
	client: ClientRecord = sim.defaultClient,
	overrides: ICredentialDataDecryptedObject = {},
): ICredentialDataDecryptedObject {
	return { ...credentialData(sim, client), keyExpiresOn: '', accessToken: '', ...overrides };
}

export interface Testbed {
	sim: Simulator;
	harness: Harness;
	/** A credential for the simulator's default client, stored in the harness. */
	credential: INodeCredentialsDetails;
	close(): Promise<void>;
}

/** A simulator over HTTPS and an n8n-core harness with a working credential for it. */
export async function startTestbed(options: SimulatorOptions = {}): Promise<Testbed> {
	const sim = await startSimulator(options);
	const harness = new Harness();
	const credential = harness.addCredential(credentialFor(sim));
	return { sim, harness, credential, close: async () => await sim.close() };
}

/**
 * Every secret a test run knows of, for "appears nowhere" assertions: each client secret, token
 * and delivery key the simulator issued or received, and what the default credential stores.
 */
export function secretsOf(testbed: Testbed): string[] {
	const secrets = new Set<string>([
		testbed.sim.defaultClient.clientSecret,
		...testbed.sim.secrets().keys(),
	]);
	const stored = testbed.harness.credentials.stored(testbed.credential.id ?? '');
	for (const field of ['clientSecret', 'accessToken']) {
		const value = stored[field];
		if (typeof value === 'string' && value.length > 0) secrets.add(value);
	}
	return [...secrets];
}
