import type { INode } from 'n8n-workflow';

import { ACTION_NODE_TYPE, CREDENTIAL_TYPE } from '../harness/node-types';

/** The action node as a workflow holds it, for unit tests that need a node but run none. */
export const actionNode: INode = {
	id: 'node',
	name: 'Invoicing & Assets',
	type: ACTION_NODE_TYPE,
	typeVersion: 1,
	position: [0, 0],
	parameters: {},
	credentials: { [CREDENTIAL_TYPE]: { id: '1', name: 'credential' } },
};
