import type { ICredentialDataDecryptedObject, INode } from 'n8n-workflow';

import type { Invoice } from '../../nodes/InvoicingAssets/transport/contract';
import { bindToken } from '../../nodes/InvoicingAssets/transport/tokenBinding';
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

/** A credential's data with a token obtained for it, for unit tests over a fake n8n context. */
export function credentialWithToken(): ICredentialDataDecryptedObject {
	const fields = { baseUrl: 'https://api.example.com', clientId: 'client' };
	return { ...fields, accessToken: bindToken('t', fields) };
}

/** An invoice whose lines bill two assets, one of them twice, and a fee that bills none. */
export const invoice: Invoice = {
	invoiceNumber: 'INV-0000042',
	customerNumber: 'CUST-10001',
	issueDate: '2025-03-01T10:00:00Z',
	dueDate: '2025-03-31T10:00:00Z',
	status: 'issued',
	currency: 'EUR',
	totalAmount: 119,
	taxAmount: 19,
	updatedAt: '2025-03-01T10:00:00Z',
	lines: [
		{ description: 'Router', quantity: 1, unitPrice: 50, amount: 50, assetId: 'AST-000002' },
		{ description: 'Fee', quantity: 1, unitPrice: 10, amount: 10, assetId: null },
		{ description: 'Switch', quantity: 1, unitPrice: 20, amount: 20, assetId: 'AST-000001' },
		{ description: 'Router again', quantity: 1, unitPrice: 20, amount: 20, assetId: 'AST-000002' },
	],
};
