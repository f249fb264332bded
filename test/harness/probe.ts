/**
 * A node that lists the service's subscriptions with n8n's own authenticated request, without the
 * package's transport, the way the HTTP Request node uses a credential: for tests of what n8n
 * itself does with a credential type (its `authenticate`, its refresh on 401).
 */
import type { IExecuteFunctions, INodeCredentialsDetails, INodeType } from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { paths } from '../../nodes/InvoicingAssets/transport/contract';
import type { Harness } from './workflow';

const PROBE_NAME = 'Subscription List Probe';

/** The probe for `credentialType`: it outputs `{ subscriptions: <how many the service listed> }`. */
function subscriptionListProbe(credentialType: string): INodeType {
	return {
		description: {
			displayName: PROBE_NAME,
			name: 'subscriptionListProbe',
			group: ['transform'],
			version: 1,
			description: 'Lists the subscriptions with n8n’s own authenticated request',
			defaults: { name: PROBE_NAME },
			inputs: [NodeConnectionTypes.Main],
			outputs: [NodeConnectionTypes.Main],
			credentials: [{ name: credentialType, required: true }],
			properties: [],
		},
		async execute(this: IExecuteFunctions) {
			const { baseUrl } = await this.getCredentials(credentialType);
			const listed = (await this.helpers.httpRequestWithAuthentication.call(this, credentialType, {
				url: `${String(baseUrl)}${paths.subscriptions}`,
				headers: { Accept: 'application/json' },
				json: true,
			})) as unknown[];
			return [[{ json: { subscriptions: listed.length } }]];
		},
	};
}

/** Registers the probe for `credentialType` in `harness`; returns a runner of it, alone. */
export function addSubscriptionListProbe(harness: Harness, credentialType: string) {
	const type = `harness.subscriptionListProbe.${credentialType}`;
	harness.nodeTypes.register(type, subscriptionListProbe(credentialType));
	return async (credential: INodeCredentialsDetails) => {
		const run = await harness.runWorkflow({
			nodes: [
				{
					id: 'probe',
					name: PROBE_NAME,
					type,
					typeVersion: 1,
					position: [0, 0],
					parameters: {},
					credentials: { [credentialType]: credential },
				},
			],
			connections: {},
			startNode: PROBE_NAME,
			input: [{ json: {} }],
		});
		return run.data.resultData.runData[PROBE_NAME][0];
	};
}
