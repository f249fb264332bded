import type {
	ICredentialType,
	INodeType,
	INodeTypes,
	IVersionedNodeType,
	INodeTypeDescription,
} from 'n8n-workflow';
import { NodeHelpers } from 'n8n-workflow';

import { InvoicingAssetsApi } from '../../credentials/InvoicingAssetsApi.credentials';
import { InvoicingAssets } from '../../nodes/InvoicingAssets/InvoicingAssets.node';
import { InvoicingAssetsPollingTrigger } from '../../nodes/InvoicingAssets/InvoicingAssetsPollingTrigger.node';
import { InvoicingAssetsTrigger } from '../../nodes/InvoicingAssets/InvoicingAssetsTrigger.node';

/** The node type names n8n gives a community package's nodes. */
export const PACKAGE = 'n8n-nodes-invoicing-assets';
export const ACTION_NODE_TYPE = `${PACKAGE}.invoicingAssets`;
export const TRIGGER_NODE_TYPE = `${PACKAGE}.invoicingAssetsTrigger`;
export const POLLING_TRIGGER_NODE_TYPE = `${PACKAGE}.invoicingAssetsPollingTrigger`;
export const CREDENTIAL_TYPE = 'invoicingAssetsApi';

/** The node types of this package, registered under the names n8n gives them. */
export class PackageNodeTypes implements INodeTypes {
	private readonly types = new Map<string, INodeType>([
		[ACTION_NODE_TYPE, new InvoicingAssets()],
		[TRIGGER_NODE_TYPE, new InvoicingAssetsTrigger()],
		[POLLING_TRIGGER_NODE_TYPE, new InvoicingAssetsPollingTrigger()],
	]);

	/** Adds a node type that is not the package's (to test the harness itself). */
	register(name: string, type: INodeType) {
		this.types.set(name, type);
	}

	getByName(nodeType: string): INodeType | IVersionedNodeType {
		return this.getByNameAndVersion(nodeType);
	}

	getByNameAndVersion(nodeType: string, version?: number): INodeType {
		const type = this.types.get(nodeType);
		if (!type) throw new Error(`Unknown node type ${nodeType}`);
		return NodeHelpers.getVersionedNodeType(type, version) as INodeType;
	}

	getKnownTypes() {
		const known: Record<string, { className: string; sourcePath: string }> = {};
		for (const [name, type] of this.types) {
			known[name] = { className: type.constructor.name, sourcePath: '' };
		}
		return known;
	}

	descriptions(): INodeTypeDescription[] {
		return [...this.types.values()].map((type) => type.description);
	}
}

/** The credential types the harness knows: the package's, and any a test registers. */
export const credentialTypes: Record<string, ICredentialType> = {
	[CREDENTIAL_TYPE]: new InvoicingAssetsApi(),
};

export function registerCredentialType(type: ICredentialType) {
	credentialTypes[type.name] = type;
}
