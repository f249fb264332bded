import type {
	ICredentialType,
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';
import type { Agent } from 'undici';

import { paths } from '../../../nodes/InvoicingAssets/transport/contract';
import { registerCredentialType } from '../../harness/node-types';
import { expectNoSecret } from '../../harness/secrets';
import { startTestbed, type Testbed } from '../../harness/testbed';
import { createAgent, fetchToken } from '../simulator/helpers';

/**
 * The harness resolves a credential's generic `authenticate` (expressions over `$credentials`)
 * as n8n does. The package's own credential authenticates with a function, so a tiny credential
 * type with a generic one is exercised here, through a node, against the simulator.
 */
const CREDENTIAL = 'harnessGenericApi';
const NODE = 'harness.genericProbe';

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

/** Lists the subscriptions with the generic credential and returns how many there are. */
class GenericProbe implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Generic Probe',
		name: 'genericProbe',
		group: ['transform'],
		version: 1,
		description: 'Calls the service with a generic credential',
		defaults: { name: 'Generic Probe' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: CREDENTIAL, required: true }],
		properties: [],
		usableAsTool: true,
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const { baseUrl } = await this.getCredentials(CREDENTIAL);
		const listed = (await this.helpers.httpRequestWithAuthentication.call(this, CREDENTIAL, {
			url: `${String(baseUrl)}${paths.subscriptions}`,
			headers: { Accept: 'application/json' },
			json: true,
		})) as unknown[];
		return [[{ json: { subscriptions: listed.length } }]];
	}
}

let testbed: Testbed;
let agent: Agent;

beforeAll(async () => {
	testbed = await startTestbed({ invoices: 5, assets: 5 });
	agent = createAgent(testbed.sim);
	registerCredentialType(genericCredential);
	testbed.harness.nodeTypes.register(NODE, new GenericProbe());
});

afterAll(async () => {
	await agent.close();
	await testbed.close();
});

async function runProbe(token: string) {
	const credential = testbed.harness.addCredential(
		{ baseUrl: testbed.sim.serviceUrl, tenant: 'tenant-7', token },
		CREDENTIAL,
	);
	const name = 'Generic Probe';
	const run = await testbed.harness.runWorkflow({
		nodes: [
			{
				id: 'probe',
				name,
				type: NODE,
				typeVersion: 1,
				position: [0, 0],
				parameters: {},
				credentials: { [CREDENTIAL]: credential },
			},
		],
		connections: {},
		startNode: name,
		input: [{ json: {} }],
	});
	return run.data.resultData.runData[name][0];
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

	const task = await runProbe(token);
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

	const task = await runProbe(`${token}-altered`);
	expect(task.error?.message).toBe('Authorization failed - please check your credentials');
	expectNoSecret(task.error, [token], 'the node error');
	// n8n tries a refused request once more before giving up.
	const refused = testbed.sim.log.entries({ route: 'subscriptions.list' });
	expect(refused.map((entry) => [entry.status, entry.errorCode])).toEqual([
		[401, 'unauthorized'],
		[401, 'unauthorized'],
	]);
});
