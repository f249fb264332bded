import type {
	ICredentialDataDecryptedObject,
	ICredentials,
	ICredentialType,
	IHttpRequestHelper,
	IHttpRequestOptions,
	INode,
	INodeCredentialsDetails,
	INodeProperties,
	IRequestOptionsSimplified,
	Workflow,
} from 'n8n-workflow';
import { ICredentialsHelper, isExpression } from 'n8n-workflow';

import { ENGINE } from './engine';
import { credentialTypes } from './node-types';

/** n8n 2.x hands `preAuthentication` nothing but `helpers.httpRequest`; n8n 1.x the node's helpers. */
function hookHelpers(helpers: IHttpRequestHelper): IHttpRequestHelper {
	if (ENGINE === '1.x') return helpers;
	return { helpers: { httpRequest: helpers.helpers.httpRequest } };
}

interface StoredCredential {
	type: string;
	data: ICredentialDataDecryptedObject;
}

/**
 * n8n's credentials helper, reduced to what a node package can observe. It reproduces the
 * CLI's semantics: credentials are read afresh for every request (as from the database);
 * `preAuthentication` runs when the expirable hidden field is empty or after the request
 * was refused, and its output is persisted for later executions, as the engine's n8n does
 * (ENGINE): 2.x (credentials-helper.js of n8n 2.41.1) stores the stored credential plus the
 * hook's output, 1.x (n8n 1.123.81) the whole object it was handed, output merged in. Generic
 * `authenticate` definitions are resolved as expressions against `$credentials`.
 */
export class TestCredentialsHelper extends ICredentialsHelper {
	private readonly store = new Map<string, StoredCredential>();

	/** How often each credential's `preAuthentication` ran, and how often it was persisted. */
	readonly preAuthenticationRuns = new Map<string, number>();

	readonly updates = new Map<string, number>();

	add(id: string, type: string, data: ICredentialDataDecryptedObject): INodeCredentialsDetails {
		this.store.set(id, { type, data: structuredClone(data) });
		return { id, name: `${type} ${id}` };
	}

	/** What n8n would have in its database for this credential now. */
	stored(id: string): ICredentialDataDecryptedObject {
		return structuredClone(this.record(id).data);
	}

	/**
	 * Changes fields as a user saving the credential in n8n's editor does: the fields given change,
	 * every other one keeps its stored value, the hidden access token included (the editor loads
	 * it redacted, and n8n's CredentialsService.unredact restores the stored value on save).
	 */
	edit(id: string, changes: ICredentialDataDecryptedObject) {
		const record = this.record(id);
		record.data = { ...record.data, ...structuredClone(changes) };
	}

	getParentTypes(): string[] {
		return [];
	}

	isCredentialUsableByNode(): boolean {
		return true;
	}

	getCredentialsProperties(type: string): INodeProperties[] {
		return this.credentialType(type).properties;
	}

	async getCredentials(nodeCredentials: INodeCredentialsDetails): Promise<ICredentials> {
		const record = this.record(nodeCredentials.id ?? '');
		return {
			id: nodeCredentials.id ?? undefined,
			name: nodeCredentials.name,
			type: record.type,
			data: undefined,
			getData: async () => structuredClone(record.data),
			getDataToSave: () => ({ data: '', id: nodeCredentials.id, name: nodeCredentials.name }),
			setData: (data: ICredentialDataDecryptedObject) => (record.data = structuredClone(data)),
		} as unknown as ICredentials;
	}

	async getDecrypted(
		_additionalData: unknown,
		nodeCredentials: INodeCredentialsDetails,
		type: string,
	): Promise<ICredentialDataDecryptedObject> {
		const record = this.record(nodeCredentials.id ?? '');
		if (record.type !== type) {
			throw new Error(`Credential ${nodeCredentials.id} is of type ${record.type}, not ${type}`);
		}
		const defaults: ICredentialDataDecryptedObject = {};
		for (const property of this.credentialType(type).properties) {
			defaults[property.name] = property.default as ICredentialDataDecryptedObject[string];
		}
		return { ...defaults, ...structuredClone(record.data) };
	}

	async updateCredentials(
		nodeCredentials: INodeCredentialsDetails,
		_type: string,
		data: ICredentialDataDecryptedObject,
	): Promise<void> {
		const id = nodeCredentials.id ?? '';
		this.record(id).data = structuredClone(data);
		this.updates.set(id, (this.updates.get(id) ?? 0) + 1);
	}

	async updateCredentialsOauthTokenData(): Promise<void> {}

	async preAuthentication(
		helpers: IHttpRequestHelper,
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
		node: INode,
		credentialsExpired: boolean,
	): Promise<ICredentialDataDecryptedObject | undefined> {
		const credentialType = this.credentialType(typeName);
		const expirable = credentialType.properties.find(
			(property) => property.type === 'hidden' && property.typeOptions?.expirable === true,
		);
		if (!expirable || typeof credentialType.preAuthentication !== 'function') return undefined;
		if (credentials[expirable.name] !== '' && !credentialsExpired) return undefined;

		const nodeCredentials = node.credentials?.[typeName];
		if (nodeCredentials?.id) {
			this.preAuthenticationRuns.set(
				nodeCredentials.id,
				(this.preAuthenticationRuns.get(nodeCredentials.id) ?? 0) + 1,
			);
		}
		const output = await credentialType.preAuthentication.call(hookHelpers(helpers), credentials);
		if (output[expirable.name] === undefined || !nodeCredentials) return undefined;

		if (ENGINE === '1.x') {
			await this.updateCredentials(nodeCredentials, typeName, Object.assign(credentials, output));
			return Object.assign(credentials, output);
		}
		const stored = await (await this.getCredentials(nodeCredentials)).getData();
		const toPersist = { ...stored };
		for (const [key, value] of Object.entries(output)) {
			if (key === expirable.name || !isExpression(stored[key]))
				toPersist[key] = value as ICredentialDataDecryptedObject[string];
		}
		await this.updateCredentials(nodeCredentials, typeName, toPersist);
		return Object.assign(credentials, output as ICredentialDataDecryptedObject);
	}

	async runPreAuthentication(
		helpers: IHttpRequestHelper,
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
	): Promise<ICredentialDataDecryptedObject | undefined> {
		const credentialType = this.credentialType(typeName);
		if (typeof credentialType.preAuthentication !== 'function') return undefined;
		return (
			((await credentialType.preAuthentication.call(
				hookHelpers(helpers),
				credentials,
			)) as ICredentialDataDecryptedObject) ?? undefined
		);
	}

	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
		requestOptions: IHttpRequestOptions | IRequestOptionsSimplified,
		workflow?: Workflow,
		node?: INode,
	): Promise<IHttpRequestOptions> {
		const options = requestOptions as IHttpRequestOptions & Record<string, Record<string, unknown>>;
		const { authenticate } = this.credentialType(typeName);
		if (typeof authenticate === 'function') return await authenticate(credentials, options);
		if (authenticate?.type !== 'generic') return options;
		if (!workflow || !node) throw new Error('Generic authentication needs the workflow and node');

		const resolve = (value: unknown) => {
			if (!isExpression(value)) return value;
			const resolved = workflow.expression.getSimpleParameterValue(
				node,
				value as string,
				'internal',
				{ $credentials: credentials },
				undefined,
				'',
			);
			return resolved ? String(resolved) : '';
		};
		for (const [section, entries] of Object.entries(authenticate.properties)) {
			options[section] ??= {};
			for (const [key, value] of Object.entries(entries as Record<string, unknown>)) {
				options[section][String(resolve(key))] = resolve(value);
			}
		}
		return options;
	}

	private record(id: string): StoredCredential {
		const record = this.store.get(id);
		if (!record) throw new Error(`No credential with id ${id}`);
		return record;
	}

	private credentialType(name: string): ICredentialType {
		const type = credentialTypes[name];
		if (!type) throw new Error(`Unknown credential type ${name}`);
		return type;
	}
}
