/**
 * Holds the simulator to the contract document while tests run: every request it receives,
 * every answer it sends and every delivery it makes is validated against
 * docs/service-contract.openapi.yaml (JSON Schema 2020-12 with ajv, and a small route matcher).
 * A mismatch is recorded as a ContractViolation naming the route and the schema path; the test
 * setup (test/harness/contract-violations.ts) fails the test during which it was recorded.
 *
 * Deliberate deviations are exempt, and recorded as such (`deviations()`):
 * - an answer of fault injection (the request log marks it `fault`);
 * - an answer that the simulator marks with `deviation` (see `deviation()` in http-util.ts): a
 *   test switch that makes the simulator break the contract on purpose;
 * - a request that carries the header `X-Contract-Deviation: <why>`: a test that sends a request
 *   outside the contract on purpose (its answer is still validated);
 * - a delivery of an event that a test emitted with `emitEvent(…, { deviation: '<why>' })`, and an
 *   invoice issued with `issueInvoice(…, { deviation: '<why>' })` (answers that carry it, its event);
 * - in a test whose requests the package sends (no header possible),
 *   `sim.contract.tolerate('<why>', { direction, route })`: until the test ends, violations that
 *   match are recorded as deviations.
 */
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

import {
	componentSchema,
	contractDocument,
	deref,
	operations,
	parametersOf,
	pointerOf,
	resolveRef,
	type OpenApiNode,
	type OpenApiOperation,
} from './openapi';

export const DEVIATION_HEADER = 'x-contract-deviation';

export type ContractDirection = 'request' | 'response' | 'delivery';

export interface ContractViolation {
	direction: ContractDirection;
	/** Method and path template (or the raw path when no operation matches), e.g. `GET /invoice/v1/invoices/{invoiceNumber}`. */
	route: string;
	operationId: string | null;
	status: number | null;
	/** Where in the contract document the rule that failed is, e.g. `#/components/schemas/Invoice/required`. */
	schemaPath: string;
	/** Where in the request or answer the mismatch is (JSON pointer; `query/pageSize` for a parameter). */
	instancePath: string;
	message: string;
}

export interface ContractDeviation {
	direction: ContractDirection;
	route: string;
	reason: string;
}

/** What the simulator received, as the contract sees it. */
export interface ReceivedRequest {
	/** Which listener: the identity service's token endpoint, or the service API. */
	server: 'identity' | 'service';
	method: string;
	/** The path without the query and without the sandbox prefix. */
	path: string;
	search: URLSearchParams;
	headers: Record<string, string | string[] | undefined>;
	/** undefined when the body could not be read. */
	body: Buffer | undefined;
}

/** What the simulator answered. */
export interface SentAnswer {
	status: number;
	headers: Record<string, string>;
	/** The JSON value sent, or the raw text. */
	body?: unknown;
	raw?: string;
}

/* --------------------------------------------------------------- violations of all */

const pending: ContractViolation[] = [];
const tolerating = new Set<ContractMonitor>();

/**
 * Every violation recorded by any simulator of this process since the last call; clears them
 * and ends every `tolerate()` (the test setup calls it when a test ends).
 */
export function takeContractViolations(): ContractViolation[] {
	for (const monitor of tolerating) monitor.endTolerances();
	tolerating.clear();
	return pending.splice(0, pending.length);
}

export interface ToleranceFilter {
	direction?: ContractDirection;
	/** Method and path template, e.g. `GET /invoice/v1/invoices/{invoiceNumber}`. */
	route?: string;
}

export function describeViolations(violations: ContractViolation[]): string {
	const shown = violations.slice(0, 25);
	const lines = shown.map(
		(v) =>
			`- ${v.direction} ${v.route}${v.status !== null ? ` → ${v.status}` : ''}: ${v.message} (instance ${v.instancePath || '/'}, schema ${v.schemaPath})`,
	);
	if (violations.length > shown.length)
		lines.push(`- and ${violations.length - shown.length} more`);
	return `The simulator saw ${violations.length} contract violation(s) against docs/service-contract.openapi.yaml:\n${lines.join('\n')}\nA deliberate deviation must be marked (see test/simulator/contract-check.ts).`;
}

/* ------------------------------------------------------------------------ schemas */

/** Where each schema object given to ajv sits in the contract document (a JSON pointer). */
const locations = new WeakMap<object, string>();

/** A copy of a schema of the document with `#/components/schemas/X` references as `#/$defs/X`. */
function rewriteRefs(node: OpenApiNode, pointer: string): OpenApiNode {
	if (node === null || typeof node !== 'object') return node;
	if (Array.isArray(node))
		return node.map((item, index) => rewriteRefs(item, `${pointer}/${index}`));
	const copy: Record<string, unknown> = {};
	for (const [key, value] of Object.entries(node)) {
		copy[key] =
			key === '$ref' && typeof value === 'string' && value.startsWith('#/components/schemas/')
				? `#/$defs/${value.slice('#/components/schemas/'.length)}`
				: rewriteRefs(value, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
	}
	locations.set(copy, pointer);
	return copy;
}

let compiled: { ajv: Ajv2020; defs: OpenApiNode; cache: Map<string, ValidateFunction> } | undefined;

function validatorAt(pointer: string, schema: OpenApiNode): ValidateFunction {
	if (!compiled) {
		const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false, verbose: true });
		addFormats(ajv);
		ajv.addVocabulary(['x-source', 'example']);
		const defs = rewriteRefs(contractDocument().components.schemas, '#/components/schemas');
		compiled = { ajv, defs, cache: new Map() };
	}
	let validate = compiled.cache.get(pointer);
	if (!validate) {
		// Each schema carries the document's component schemas as its $defs.
		validate = compiled.ajv.compile({ ...rewriteRefs(schema, pointer), $defs: compiled.defs });
		compiled.cache.set(pointer, validate);
	}
	return validate;
}

/** Where an ajv error's rule is in the contract document. */
function documentPath(schemaPointer: string, error: ErrorObject): string {
	const parent = error.parentSchema ? locations.get(error.parentSchema) : undefined;
	if (parent !== undefined) return `${parent}/${error.keyword}`;
	return `${schemaPointer}${error.schemaPath.replace(/^#/, '')}`;
}

function describeError(error: ErrorObject): string {
	const extra =
		error.keyword === 'enum'
			? `: ${JSON.stringify((error.params as { allowedValues: unknown[] }).allowedValues)}`
			: error.keyword === 'additionalProperties'
				? `: '${(error.params as { additionalProperty: string }).additionalProperty}'`
				: '';
	return `${error.message ?? error.keyword}${extra}`;
}

/* ----------------------------------------------------------------------- matching */

interface Match {
	operation: OpenApiOperation;
	params: Record<string, string>;
}

function templateMatch(template: string, path: string): Record<string, string> | undefined {
	const want = template.split('/');
	const got = path.split('/');
	if (want.length !== got.length) return undefined;
	const params: Record<string, string> = {};
	for (let i = 0; i < want.length; i++) {
		const name = /^\{([^}]+)\}$/.exec(want[i]);
		if (name) {
			if (got[i] === '') return undefined;
			params[name[1]] = got[i];
		} else if (want[i] !== got[i]) {
			return undefined;
		}
	}
	return params;
}

function routeOf(method: string, path: string): string {
	return `${method} ${path}`;
}

function mediaTypeOf(header: string | string[] | undefined): string {
	const value = Array.isArray(header) ? header[0] : header;
	return (value ?? '').split(';')[0].trim().toLowerCase();
}

/** A query or form value as its schema's type wants it (query values are text on the wire). */
function coerce(value: string, schema: OpenApiNode): unknown {
	const type = deref(schema)?.type;
	if ((type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(value)) {
		return Number(value);
	}
	return value;
}

/* ------------------------------------------------------------------------ monitor */

/** One simulator's contract checks and what they found. */
export class ContractMonitor {
	private found: ContractViolation[] = [];
	private exempt: ContractDeviation[] = [];
	private static readonly KEPT_DEVIATIONS = 1000;
	private tolerances: Array<{ reason: string; filter: ToleranceFilter }> = [];

	/**
	 * Until the running test ends, a violation that matches `filter` is a deliberate deviation
	 * (recorded with `reason`), not a failure: for a test that makes the package send something
	 * outside the contract on purpose.
	 */
	tolerate(reason: string, filter: ToleranceFilter) {
		this.tolerances.push({ reason, filter });
		tolerating.add(this);
	}

	endTolerances() {
		this.tolerances = [];
	}
	private readonly document = contractDocument();

	/** `enabled: false` checks nothing: for benchmarks, whose figures must not include the check's cost. */
	constructor(private readonly enabled = true) {}
	private readonly operations = operations(this.document);

	/** Violations recorded by this simulator so far (they also fail the running test). */
	violations(): ContractViolation[] {
		return [...this.found];
	}

	/** Deliberate deviations seen so far (exempt from validation). */
	deviations(): ContractDeviation[] {
		return [...this.exempt];
	}

	reset() {
		this.found = [];
		this.exempt = [];
	}

	/** Validates a request; returns the operation it matched, to validate its answer against. */
	checkRequest(request: ReceivedRequest): OpenApiOperation | undefined {
		if (!this.enabled) return undefined;
		const match = this.match(request);
		const deviation = request.headers[DEVIATION_HEADER];
		const route = match
			? routeOf(request.method, match.operation.path)
			: routeOf(request.method, request.path);
		if (typeof deviation === 'string' && deviation.trim() !== '') {
			this.noteDeviation({ direction: 'request', route, reason: deviation });
			return match?.operation;
		}
		const report = this.reporter('request', route, match?.operation ?? null, null);
		if (!match) {
			report('#/paths', '', 'no operation of the contract has this method and path');
			return undefined;
		}
		const { operation, params } = match;
		const parameters = parametersOf(operation, this.document);
		const parametersPointer = `${operation.pointer}/parameters`;
		const declared = [
			...(operation.pathItem.parameters ?? []),
			...(operation.operation.parameters ?? []),
		];
		for (const [index, parameter] of parameters.entries()) {
			const pointer = declared[index].$ref
				? `${declared[index].$ref}/schema`
				: `${parametersPointer}/${index}/schema`;
			if (parameter.in === 'path') {
				let value: string;
				try {
					value = decodeURIComponent(params[parameter.name]);
				} catch {
					report(pointer, `path/${parameter.name}`, 'is not valid percent-encoding');
					continue;
				}
				this.validate(report, pointer, parameter.schema, value, `path/${parameter.name}`);
			} else if (parameter.in === 'query') {
				const values = request.search.getAll(parameter.name);
				if (values.length === 0) {
					if (parameter.required) report(pointer, `query/${parameter.name}`, 'is required');
					continue;
				}
				if (values.length > 1) {
					report(pointer, `query/${parameter.name}`, 'is given more than once');
					continue;
				}
				const value = coerce(values[0], parameter.schema);
				this.validate(report, pointer, parameter.schema, value, `query/${parameter.name}`);
			}
		}
		const documented = new Set(
			parameters.filter((p: OpenApiNode) => p.in === 'query').map((p: OpenApiNode) => p.name),
		);
		for (const name of new Set(request.search.keys())) {
			if (!documented.has(name)) {
				report(
					parametersPointer,
					`query/${name}`,
					'is a query argument the contract does not have',
				);
			}
		}
		const security = operation.operation.security ?? this.document.security ?? [];
		if (security.length > 0 && security.every((entry: object) => Object.keys(entry).length > 0)) {
			const authorization = request.headers.authorization;
			if (typeof authorization !== 'string' || !/^Bearer \S+$/i.test(authorization)) {
				report(
					'#/components/securitySchemes/bearerToken',
					'header/authorization',
					'must be Authorization: Bearer <accessToken>',
				);
			}
		}
		this.checkRequestBody(report, operation, request);
		return operation;
	}

	/** Validates an answer against the operation the request matched (the error shape when none did). */
	checkAnswer(
		request: Pick<ReceivedRequest, 'server' | 'method' | 'path'>,
		operation: OpenApiOperation | undefined,
		answer: SentAnswer,
		deviation?: string,
	) {
		if (!this.enabled) return;
		const route = operation
			? routeOf(request.method, operation.path)
			: routeOf(request.method, request.path);
		if (deviation) {
			this.noteDeviation({ direction: 'response', route, reason: deviation });
			return;
		}
		const report = this.reporter('response', route, operation ?? null, answer.status);
		if (!operation) {
			const name = request.server === 'identity' ? 'IdentityError' : 'ServiceError';
			const pointer = pointerOf('components', 'schemas', name);
			this.validate(report, pointer, componentSchema(name), this.jsonOf(answer), '');
			return;
		}
		const responsesPointer = `${operation.pointer}/responses`;
		const status = String(answer.status);
		const declared = operation.operation.responses?.[status];
		if (!declared) {
			report(responsesPointer, '', `status ${status} is not an answer of this operation`);
			return;
		}
		const response = deref(declared, this.document);
		const responsePointer: string = declared.$ref ?? `${responsesPointer}/${status}`;
		this.checkHeaders(report, responsePointer, response, answer.headers);
		const hasBody = answer.raw !== undefined || answer.body !== undefined;
		if (!response.content) {
			if (hasBody) report(responsePointer, '', 'has a body; the contract gives this answer none');
			return;
		}
		const media = mediaTypeOf(answer.headers['content-type']);
		const content = response.content[media];
		if (!content) {
			report(
				`${responsePointer}/content`,
				'header/content-type',
				`'${media}' is not a media type of this answer`,
			);
			return;
		}
		const value = media === 'application/json' ? this.jsonOf(answer) : (answer.raw ?? answer.body);
		if (value === undefined) {
			report(`${responsePointer}/content`, '', 'is not JSON');
			return;
		}
		const pointer = `${responsePointer}/content/${media.replace(/\//g, '~1')}/schema`;
		this.validate(report, pointer, content.schema, value, '');
	}

	/** Validates the body of a delivery against the webhook's request body. */
	checkDelivery(notificationUrl: string, body: unknown, deviation?: string) {
		if (!this.enabled) return;
		const route = 'POST {notificationUrl} (webhooks/serviceEvent)';
		if (deviation) {
			this.noteDeviation({ direction: 'delivery', route, reason: deviation });
			return;
		}
		const report = this.reporter('delivery', route, 'deliverEvent', null);
		const webhook = resolveRef('#/webhooks/serviceEvent/post', this.document);
		const pointer = '#/webhooks/serviceEvent/post/requestBody/content/application~1json/schema';
		this.validate(
			report,
			pointer,
			webhook.requestBody.content['application/json'].schema,
			body,
			'',
		);
		if (!notificationUrl.startsWith('https://')) {
			report(
				'#/components/schemas/NotificationUrl/pattern',
				'url',
				'a delivery must go to an https address',
			);
		}
	}

	/* ------------------------------------------------------------------ internals */

	private noteDeviation(deviation: ContractDeviation) {
		if (this.exempt.length < ContractMonitor.KEPT_DEVIATIONS) this.exempt.push(deviation);
	}

	private match(request: ReceivedRequest): Match | undefined {
		for (const operation of this.operations) {
			if (operation.ownServers !== (request.server === 'identity')) continue;
			if (operation.method !== request.method) continue;
			const params = templateMatch(operation.path, request.path);
			if (params) return { operation, params };
		}
		return undefined;
	}

	private reporter(
		direction: ContractDirection,
		route: string,
		operation: OpenApiOperation | string | null,
		status: number | null,
	) {
		return (schemaPath: string, instancePath: string, message: string) => {
			const violation: ContractViolation = {
				direction,
				route,
				operationId: typeof operation === 'string' ? operation : (operation?.operationId ?? null),
				status,
				schemaPath,
				instancePath,
				message,
			};
			const tolerance = this.tolerances.find(
				({ filter }) =>
					(filter.direction === undefined || filter.direction === direction) &&
					(filter.route === undefined || filter.route === route),
			);
			if (tolerance) {
				this.noteDeviation({ direction, route, reason: tolerance.reason });
				return;
			}
			this.found.push(violation);
			pending.push(violation);
		};
	}

	private validate(
		report: (schemaPath: string, instancePath: string, message: string) => void,
		pointer: string,
		schema: OpenApiNode,
		value: unknown,
		instancePrefix: string,
	) {
		const validate = validatorAt(pointer, schema);
		if (validate(value)) return;
		for (const error of validate.errors ?? []) {
			report(
				documentPath(pointer, error),
				`${instancePrefix}${error.instancePath}`,
				describeError(error),
			);
		}
	}

	private checkHeaders(
		report: (schemaPath: string, instancePath: string, message: string) => void,
		responsePointer: string,
		response: OpenApiNode,
		headers: Record<string, string>,
	) {
		for (const [name, declared] of Object.entries<OpenApiNode>(response.headers ?? {})) {
			const header = deref(declared, this.document);
			const value = headers[name.toLowerCase()];
			const pointer = `${responsePointer}/headers/${name}/schema`;
			if (value === undefined) {
				if (header.required) report(pointer, `header/${name}`, 'is required');
				continue;
			}
			if (header.schema) this.validate(report, pointer, header.schema, value, `header/${name}`);
		}
	}

	private checkRequestBody(
		report: (schemaPath: string, instancePath: string, message: string) => void,
		operation: OpenApiOperation,
		request: ReceivedRequest,
	) {
		const requestBody = deref(operation.operation.requestBody, this.document);
		if (!requestBody || request.body === undefined) return;
		const pointer = `${operation.pointer}/requestBody/content`;
		const media = mediaTypeOf(request.headers['content-type']);
		const content = requestBody.content?.[media];
		if (!content) {
			report(pointer, 'header/content-type', `'${media}' is not a media type of this request`);
			return;
		}
		const text = request.body.toString('utf8');
		let value: unknown;
		if (media === 'application/json') {
			try {
				value = JSON.parse(text);
			} catch {
				report(pointer, '', 'is not JSON');
				return;
			}
		} else if (media === 'application/x-www-form-urlencoded') {
			const form = new URLSearchParams(text);
			const fields: Record<string, unknown> = {};
			for (const name of new Set(form.keys())) {
				const values = form.getAll(name);
				fields[name] = values.length === 1 ? values[0] : values;
			}
			value = fields;
		} else {
			value = text;
		}
		this.validate(
			report,
			`${pointer}/${media.replace(/\//g, '~1')}/schema`,
			content.schema,
			value,
			'',
		);
	}

	private jsonOf(answer: SentAnswer): unknown {
		if (answer.raw === undefined) return answer.body;
		try {
			return JSON.parse(answer.raw);
		} catch {
			return undefined;
		}
	}
}
