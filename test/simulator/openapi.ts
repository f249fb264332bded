/**
 * The service contract as the provider's side reads it: docs/service-contract.openapi.yaml, the
 * one document that both the simulator and the package's contract module are held against.
 */
import { parse } from 'yaml';

import { join, readFileSync, REPOSITORY_ROOT } from '../tools/node-apis';

export const CONTRACT_DOCUMENT_PATH = join(
	REPOSITORY_ROOT,
	'docs',
	'service-contract.openapi.yaml',
);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the document is JSON of any shape
export type OpenApiNode = any;

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

export interface OpenApiOperation {
	operationId: string;
	method: string;
	/** The path template, e.g. `/invoice/v1/invoices/{invoiceNumber}`. */
	path: string;
	/** JSON pointer of the operation in the document. */
	pointer: string;
	/** Whether the path has servers of its own (the identity service). */
	ownServers: boolean;
	operation: OpenApiNode;
	pathItem: OpenApiNode;
}

let loaded: OpenApiNode | undefined;

export function contractDocument(): OpenApiNode {
	loaded ??= parse(readFileSync(CONTRACT_DOCUMENT_PATH, 'utf8'));
	return loaded;
}

export function pointerOf(...segments: string[]): string {
	return `#/${segments.map((segment) => segment.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
}

export function operations(document: OpenApiNode = contractDocument()): OpenApiOperation[] {
	const found: OpenApiOperation[] = [];
	for (const [path, pathItem] of Object.entries<OpenApiNode>(document.paths ?? {})) {
		for (const method of HTTP_METHODS) {
			const operation = pathItem[method];
			if (!operation) continue;
			found.push({
				operationId: operation.operationId,
				method: method.toUpperCase(),
				path,
				pointer: pointerOf('paths', path, method),
				ownServers: Array.isArray(pathItem.servers),
				operation,
				pathItem,
			});
		}
	}
	return found;
}

export function operationById(
	operationId: string,
	document = contractDocument(),
): OpenApiOperation {
	const found = operations(document).find((operation) => operation.operationId === operationId);
	if (!found) throw new Error(`The service contract has no operation '${operationId}'.`);
	return found;
}

/** The node a local `$ref` (`#/components/...`) points at. */
export function resolveRef(ref: string, document = contractDocument()): OpenApiNode {
	if (!ref.startsWith('#/')) throw new Error(`Only local references are supported: ${ref}`);
	return ref
		.slice(2)
		.split('/')
		.map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
		.reduce((node: OpenApiNode, segment) => node?.[segment], document);
}

/** The node itself, or what its `$ref` points at. */
export function deref(node: OpenApiNode, document = contractDocument()): OpenApiNode {
	return node && typeof node.$ref === 'string' ? resolveRef(node.$ref, document) : node;
}

/** The parameters of an operation (path-level and operation-level), references resolved. */
export function parametersOf(operation: OpenApiOperation, document = contractDocument()) {
	return [...(operation.pathItem.parameters ?? []), ...(operation.operation.parameters ?? [])].map(
		(parameter: OpenApiNode) => deref(parameter, document),
	);
}

export function componentSchema(name: string, document = contractDocument()): OpenApiNode {
	const schema = document.components?.schemas?.[name];
	if (!schema) throw new Error(`The service contract has no schema '${name}'.`);
	return schema;
}
