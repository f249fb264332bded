/**
 * The package's contract (transport/contract.ts, and the readers of transport/responses.ts that
 * read by it) held against the contract document (docs/service-contract.openapi.yaml): every
 * path, query name, page limit, status and error code the package uses exists there with the
 * same meaning. The simulator is held against the same
 * document on its own side (test/simulator/contract-check.ts), so the two never agree by
 * sharing a file.
 */
import {
	ASSET_ID_PATTERN,
	ASSET_STATUSES,
	DELIVERY_KEY_PARAMETER,
	EVENT_TYPES,
	EXPIRED_KEY_ERROR,
	FIRST_PAGE,
	GRANT_PATH,
	INVALID_SCOPE_ERROR,
	INVOICE_NUMBER_PATTERN,
	INVOICE_STATUSES,
	MAX_PAGE_SIZE,
	REJECTED_CLIENT_ERRORS,
	RETRYABLE_STATUSES,
	SCOPE_SUFFIX,
	SUBSCRIPTION_ID_PATTERN,
	SUBSCRIPTION_NOT_FOUND_ERROR,
	TOKEN_REFUSED_STATUS,
	TRANSIENT_SERVER_STATUSES,
	UNPROCESSED_STATUSES,
	pageQuery,
	paths,
	tokenRequestForm,
	toServiceTimestamp,
	type AssetFilters,
	type InvoiceFilters,
	type Page,
	type ServiceEvent,
	type SubscriptionRequest,
} from '../../../nodes/InvoicingAssets/transport/contract';
import {
	isServiceEvent,
	readCreatedSubscriptionId,
	readIdentityError,
	readPage,
	readServiceError,
	readSubscriptionListPage,
} from '../../../nodes/InvoicingAssets/transport/responses';
import {
	ASSET_SUMMARY_FIELDS,
	INVOICE_SUMMARY_FIELDS,
} from '../../../nodes/InvoicingAssets/actions/simplify';
import {
	componentSchema,
	contractDocument,
	deref,
	operationById,
	operations,
	parametersOf,
	resolveRef,
	type OpenApiNode,
} from '../../simulator/openapi';

const document = contractDocument();
const MARKER = 'CONTRACT0TEST0MARKER';

/** A path builder of the package, as a template with the parameter named `name`. */
function template(build: (value: string) => string, name: string): string {
	return build(MARKER).replace(MARKER, `{${name}}`);
}

function queryNames(operationId: string): string[] {
	return parametersOf(operationById(operationId))
		.filter((parameter: OpenApiNode) => parameter.in === 'query')
		.map((parameter: OpenApiNode) => parameter.name);
}

function queryParameter(operationId: string, name: string): OpenApiNode {
	return parametersOf(operationById(operationId)).find(
		(parameter: OpenApiNode) => parameter.in === 'query' && parameter.name === name,
	);
}

const LIST_OPERATIONS = ['listInvoices', 'listAssets', 'listSubscriptions'];
const SERVICE_OPERATIONS = operations().filter((operation) => !operation.ownServers);

/** The package's list filters; a renamed or added field fails to compile until it is listed here. */
const INVOICE_FILTER_NAMES = Object.keys({
	issuedFrom: true,
	issuedTo: true,
	status: true,
	customerNumber: true,
} satisfies Partial<Record<keyof InvoiceFilters, true>>);
const ASSET_FILTER_NAMES = Object.keys({
	status: true,
	type: true,
	site: true,
	customerNumber: true,
	serialNumber: true,
} satisfies Partial<Record<keyof AssetFilters, true>>);

describe('paths', () => {
	test('the token endpoint is a POST on the identity service’s own server', () => {
		const token = operationById('requestToken');
		expect(token.path).toBe(GRANT_PATH);
		expect(token.method).toBe('POST');
		expect(token.ownServers).toBe(true);
	});

	test.each([
		['createSubscription', 'POST', paths.subscriptions],
		['listSubscriptions', 'GET', paths.subscriptions],
		['deleteSubscription', 'DELETE', template(paths.subscription, 'id')],
		['listInvoices', 'GET', paths.invoices],
		['getInvoice', 'GET', template(paths.invoice, 'invoiceNumber')],
		['listAssets', 'GET', paths.assets],
		['getAsset', 'GET', template(paths.asset, 'assetId')],
	])('%s is %s %s, on the Base URL', (operationId, method, path) => {
		const operation = operationById(operationId);
		expect(`${operation.method} ${operation.path}`).toBe(`${method} ${path}`);
		expect(operation.ownServers).toBe(false);
	});

	test('a path parameter travels URL-encoded: a slash in an invoice number stays one segment', () => {
		expect(paths.invoice('INV/1')).toBe(
			template(paths.invoice, 'invoiceNumber').replace('{invoiceNumber}', 'INV%2F1'),
		);
	});
});

describe('query names and pages', () => {
	test.each(LIST_OPERATIONS)(
		'%s takes page and pageSize as the package sends them',
		(operationId) => {
			const query = pageQuery(FIRST_PAGE, MAX_PAGE_SIZE);
			for (const name of Object.keys(query)) expect(queryNames(operationId)).toContain(name);
			const page = deref(queryParameter(operationId, 'page').schema);
			const pageSize = deref(queryParameter(operationId, 'pageSize').schema);
			expect(page.type).toBe('integer');
			expect(page.minimum).toBe(FIRST_PAGE);
			expect(pageSize.type).toBe('integer');
			expect(pageSize.minimum).toBe(1);
			expect(pageSize.maximum).toBe(MAX_PAGE_SIZE);
		},
	);

	test('the page envelope has the fields the package reads, with the same limits', () => {
		const envelope = componentSchema('PageEnvelope');
		const fields = Object.keys({
			items: true,
			page: true,
			pageSize: true,
			totalItems: true,
		} satisfies Record<keyof Page<unknown>, true>);
		expect([...envelope.required].sort()).toEqual([...fields].sort());
		expect(envelope.properties.page.minimum).toBe(FIRST_PAGE);
		expect(envelope.properties.pageSize.maximum).toBe(MAX_PAGE_SIZE);
		const sample = { items: [], page: FIRST_PAGE, pageSize: MAX_PAGE_SIZE, totalItems: 0 };
		expect(readPage(sample)).toEqual(sample);
	});

	test('the subscription list answers a bare array or the page envelope, and the package reads both', () => {
		const answer = deref(operationById('listSubscriptions').operation.responses['200']);
		const forms = resolveRef(answer.content['application/json'].schema.$ref).oneOf.map(
			(form: OpenApiNode) => deref(form),
		);
		const [bareArray, envelope] = forms;
		expect(forms).toHaveLength(2);
		expect(bareArray.type).toBe('array');
		expect(bareArray.items.$ref).toBe('#/components/schemas/Subscription');
		expect(envelope.allOf[0].$ref).toBe('#/components/schemas/PageEnvelope');
		expect(envelope.allOf[1].properties.items.items.$ref).toBe('#/components/schemas/Subscription');
		const entry = {
			id: '3f1d2c4b-5a6e-4f70-8a9b-0c1d2e3f4a5b',
			notificationUrl: 'https://n8n.example.com/webhook/x',
			eventTypes: null,
			description: null,
			createdAt: '2026-01-01T00:00:00Z',
		};
		expect(readSubscriptionListPage([entry], FIRST_PAGE)?.items).toEqual([entry]);
		const page = { items: [entry], page: 2, pageSize: MAX_PAGE_SIZE, totalItems: 101 };
		expect(readSubscriptionListPage(page, 2)).toEqual(page);
	});

	test.each([
		['listInvoices', INVOICE_FILTER_NAMES],
		['listAssets', ASSET_FILTER_NAMES],
	])('every filter of %s the package sends is a query parameter there', (operationId, names) => {
		for (const name of names) expect(queryNames(operationId)).toContain(name);
	});

	test('status filters and record statuses are the same sets', () => {
		expect(deref(queryParameter('listInvoices', 'status').schema).enum).toEqual([
			...INVOICE_STATUSES,
		]);
		expect(deref(queryParameter('listAssets', 'status').schema).enum).toEqual([...ASSET_STATUSES]);
		expect(componentSchema('InvoiceStatus').enum).toEqual([...INVOICE_STATUSES]);
		expect(componentSchema('AssetStatus').enum).toEqual([...ASSET_STATUSES]);
	});

	test('timestamps and identifiers have the package’s patterns', () => {
		// What the package writes (filters, stored times) is a timestamp of the document.
		const timestamp = new RegExp(String(componentSchema('Timestamp').pattern));
		expect(toServiceTimestamp(new Date('2026-03-31T14:30:00.250Z'))).toMatch(timestamp);
		expect(componentSchema('InvoiceNumber').pattern).toBe(`^${INVOICE_NUMBER_PATTERN}$`);
		expect(componentSchema('AssetId').pattern).toBe(`^${ASSET_ID_PATTERN}$`);
		expect(componentSchema('SubscriptionId').pattern).toBe(`^${SUBSCRIPTION_ID_PATTERN}$`);
	});
});

describe('statuses', () => {
	test('create answers 201, delete 204, and every service call may answer what the package retries', () => {
		expect(operationById('createSubscription').operation.responses['201']).toBeDefined();
		expect(operationById('deleteSubscription').operation.responses['204']).toBeDefined();
		for (const operation of SERVICE_OPERATIONS) {
			for (const status of [
				...RETRYABLE_STATUSES,
				...TRANSIENT_SERVER_STATUSES,
				TOKEN_REFUSED_STATUS,
			]) {
				expect([operation.operationId, operation.operation.responses[String(status)]]).toEqual([
					operation.operationId,
					expect.anything(),
				]);
			}
		}
	});

	test('the statuses the package waits on carry Retry-After, in seconds or as an HTTP date', () => {
		expect(UNPROCESSED_STATUSES.every((status) => RETRYABLE_STATUSES.includes(status))).toBe(true);
		for (const operation of operations()) {
			for (const status of RETRYABLE_STATUSES) {
				const response = deref(operation.operation.responses[String(status)]);
				const header = deref(response.headers['Retry-After']);
				const patterns = header.schema.oneOf.map(
					(schema: OpenApiNode) => new RegExp(schema.pattern),
				);
				for (const value of ['120', 'Wed, 21 Oct 2026 07:28:00 GMT']) {
					expect(patterns.some((pattern: RegExp) => pattern.test(value))).toBe(true);
				}
			}
		}
	});
});

describe('error codes', () => {
	test('the delete call’s 404 for an unknown subscription has the code the package looks for', () => {
		const notFound = deref(operationById('deleteSubscription').operation.responses['404']);
		const schema = resolveRef(notFound.content['application/json'].schema.$ref);
		expect(schema.allOf[1].properties.code.const).toBe(SUBSCRIPTION_NOT_FOUND_ERROR);
	});

	test('the identity error codes the package tells apart are codes of the identity error', () => {
		const codes = componentSchema('IdentityErrorCode').examples;
		for (const code of [...REJECTED_CLIENT_ERRORS, EXPIRED_KEY_ERROR, INVALID_SCOPE_ERROR]) {
			expect(codes).toContain(code);
		}
		const identityError = componentSchema('IdentityError');
		expect(identityError.required).toEqual(['error', 'error_description']);
		expect(readIdentityError({ error: EXPIRED_KEY_ERROR, error_description: 'gone' })).toEqual({
			error: EXPIRED_KEY_ERROR,
			error_description: 'gone',
		});
	});

	test('the service error’s fields are the ones the package reads first', () => {
		expect(componentSchema('ServiceError').required).toEqual(['code', 'message', 'details']);
		expect(
			readServiceError({ code: 'not_found', message: 'No such invoice.', details: null }),
		).toEqual({
			code: 'not_found',
			message: 'No such invoice.',
		});
	});
});

describe('bodies', () => {
	test('the token request form has exactly the contract’s fields', () => {
		const schema = componentSchema('TokenRequest');
		const form = tokenRequestForm('id', 'secret', `api://x${SCOPE_SUFFIX}`);
		expect(Object.keys(form).sort()).toEqual([...schema.required].sort());
		expect(form.grant_type).toBe(schema.properties.grant_type.const);
		expect(form.scope).toMatch(new RegExp(schema.properties.scope.pattern));
	});

	test('the subscription request has exactly the contract’s fields, and its event types', () => {
		const schema = componentSchema('SubscriptionRequest');
		const fields = Object.keys({
			notificationUrl: true,
			eventTypes: true,
			description: true,
		} satisfies Record<keyof SubscriptionRequest, true>);
		expect([...schema.required].sort()).toEqual([...fields].sort());
		expect(componentSchema('EventType').enum).toEqual([...EVENT_TYPES]);
	});

	test('every form of the create answer’s GUID that the document shows is read', () => {
		const created = operationById('createSubscription').operation.responses['201'].content;
		const examples = Object.entries<OpenApiNode>(created).flatMap(([media, content]) =>
			Object.values<OpenApiNode>(content.examples).map((example) =>
				media === 'application/json' ? JSON.stringify(example.value) : example.value,
			),
		);
		expect(examples.length).toBeGreaterThanOrEqual(3);
		for (const body of examples) {
			expect(readCreatedSubscriptionId(body)).toBe('3f1d2c4b-5a6e-4f70-8a9b-0c1d2e3f4a5b');
		}
	});

	test('records have every field the Simplify option keeps', () => {
		for (const field of INVOICE_SUMMARY_FIELDS)
			expect(componentSchema('Invoice').required).toContain(field);
		for (const field of ASSET_SUMMARY_FIELDS)
			expect(componentSchema('Asset').required).toContain(field);
	});

	test('the delivery’s body and key are what the trigger reads', () => {
		const event = componentSchema('Event');
		const fields = Object.keys({
			eventId: true,
			eventType: true,
			occurredAt: true,
			subscriptionId: true,
			data: true,
		} satisfies Record<keyof ServiceEvent, true>);
		expect([...event.required].sort()).toEqual([...fields].sort());
		const webhook = document.webhooks.serviceEvent.post;
		expect(webhook.parameters.map((parameter: OpenApiNode) => parameter.name)).toEqual([
			DELIVERY_KEY_PARAMETER,
		]);
		expect(
			isServiceEvent({
				eventId: '3f1d2c4b-5a6e-4f70-8a9b-0c1d2e3f4a5b',
				eventType: EVENT_TYPES[0],
				occurredAt: '2025-03-01T09:30:00Z',
				subscriptionId: null,
				data: { invoiceNumber: 'INV-1' },
			}),
		).toBe(true);
	});
});
