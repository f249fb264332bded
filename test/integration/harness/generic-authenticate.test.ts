import type { ICredentialType } from 'n8n-workflow';
import type { Agent } from 'undici';

import { registerCredentialType } from '../../harness/node-types';
import { addSubscriptionListProbe } from '../../harness/probe';
import { expectNoSecret } from '../../harness/secrets';
import { startTestbed, type Testbed } from '../../harness/testbed';
import { createAgent, fetchToken } from '../simulator/helpers';

/**
 * The harness resolves a credential's generic `authenticate` (expressions over `$credentials`)
 * as n8n does. The package's own credential authenticates with a function, so a tiny credential
 * type with a generic one is exercised here, through a node, against the simulator.
 */
const CREDENTIAL = 'harnessGenericApi';

const genericCredential: ICredentialType = {
	name: CREDENTIAL,
	displayName: 'Harness Generic API',
	properties: [
		{ displayName: 'Base URL', name: 'baseUrl', type: 'string', default: '' },
		{ displayName: 'Tenant', name: 'tenant', type: 'string', default: '' },
		{
			displayName: 'Token',
			name: 'token',
			type: 'string',
			typeOptions: { password: true },
			default: '',
		},
	],
	authenticate: {
		type: 'generic',
		properties: {
			headers: { Authorization: '={{ "Bearer " + $credentials.token }}' },
			qs: { '={{ "tenant" }}': '={{ $credentials.tenant }}' },
		},
	},
};

let testbed: Testbed;
let agent: Agent;
let runProbe: ReturnType<typeof addSubscriptionListProbe>;

beforeAll(async () => {
	testbed = await startTestbed({ invoices: 5, assets: 5 });
	agent = createAgent(testbed.sim);
	registerCredentialType(genericCredential);
	runProbe = addSubscriptionListProbe(testbed.harness, CREDENTIAL);
});

afterAll(async () => {
	await agent.close();
	await testbed.close();
});

/** The probe's run with a generic credential holding `token`. */
async function runWithToken(token: string) {
	const credential = testbed.harness.addCredential(
		{ baseUrl: testbed.sim.serviceUrl, tenant: 'tenant-7', token },
		CREDENTIAL,
	);
	return await runProbe(credential);
}

// The probe credential adds a query argument of its own, which the contract does not have.
beforeEach(() =>
	testbed.sim.contract.tolerate('the probe credential adds a tenant query argument', {
		direction: 'request',
		route: 'GET /subscription/v1/subscription',
	}),
);

test('the header and query of a generic authenticate are resolved from $credentials', async () => {
	const token = await fetchToken(agent, testbed.sim);
	testbed.sim.log.reset();

	const task = await runWithToken(token);
	expect(task.error).toBeUndefined();
	expect(task.data?.main[0]?.map((item) => item.json)).toEqual([{ subscriptions: 0 }]);
	expect(testbed.sim.log.entries({ route: 'subscriptions.list' })).toEqual([
		expect.objectContaining({
			status: 200,
			clientId: testbed.sim.defaultClient.clientId,
			query: { tenant: 'tenant-7' },
		}),
	]);
});

test('a token the expression resolves wrongly is refused by the service (401)', async () => {
	const token = await fetchToken(agent, testbed.sim);
	testbed.sim.log.reset();

	const task = await runWithToken(`${token}-altered`);
	expect(task.error?.message).toBe('Authorization failed - please check your credentials');
	expectNoSecret(task.error, [token], 'the node error');
	// n8n tries a refused request once more before giving up.
	const refused = testbed.sim.log.entries({ route: 'subscriptions.list' });
	expect(refused.map((entry) => [entry.status, entry.errorCode])).toEqual([
		[401, 'unauthorized'],
		[401, 'unauthorized'],
	]);
});
