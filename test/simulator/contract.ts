/**
 * The provider's side of the service contract: the paths, limits, codes and record types the
 * simulator implements, read from docs/service-contract.openapi.yaml where the document states
 * them and written from it otherwise. The simulator never reads the package's contract module,
 * so a wrong edit on either side makes the two disagree, and tests fail.
 */
import { componentSchema, operationById, parametersOf, resolveRef } from './openapi';

/* ------------------------------------------------------------------ identity service */

/** The token endpoint's path, on the identity service (spec). */
export const TOKEN_PATH = operationById('requestToken').path;

/** A scope names the API resource and ends with this suffix (spec). */
export const SCOPE_SUFFIX = '/.default';

/** An access token is valid for 60 minutes (spec). */
export const ACCESS_TOKEN_LIFETIME_SECONDS = 60 * 60;

/** An API key expires at most twelve months after its creation (spec). */
export const API_KEY_MAX_LIFETIME_MONTHS = 12;

/** The identity service's OAuth error codes the package tells apart (assumed). */
export const EXPIRED_KEY_ERROR = 'key_expired';
export const INVALID_SCOPE_ERROR = 'invalid_scope';

/* --------------------------------------------------------------------- service API */

export const JSON_MEDIA_TYPE = 'application/json';

/** Path templates of the service API's operations, by the simulator's route name. */
export const SERVICE_PATHS = {
	'subscriptions.create': operationById('createSubscription').path,
	'subscriptions.list': operationById('listSubscriptions').path,
	'subscriptions.delete': operationById('deleteSubscription').path,
	'invoices.list': operationById('listInvoices').path,
	'invoices.get': operationById('getInvoice').path,
	'assets.list': operationById('listAssets').path,
	'assets.get': operationById('getAsset').path,
};

/** The operationId of each route in the contract document. */
export const OPERATION_IDS = {
	token: 'requestToken',
	'subscriptions.create': 'createSubscription',
	'subscriptions.list': 'listSubscriptions',
	'subscriptions.delete': 'deleteSubscription',
	'invoices.list': 'listInvoices',
	'invoices.get': 'getInvoice',
	'assets.list': 'listAssets',
	'assets.get': 'getAsset',
} as const;

/** A subscription's address: the delete path with the ID filled in (URL-encoded). */
export function subscriptionPath(id: string): string {
	return SERVICE_PATHS['subscriptions.delete'].replace('{id}', encodeURIComponent(id));
}

const listParameters = parametersOf(operationById('listInvoices'));
const parameterSchema = (name: string) =>
	listParameters.find((parameter: { name: string }) => parameter.name === name).schema;

/** Pages start here (the `page` parameter's minimum). */
export const FIRST_PAGE: number = parameterSchema('page').minimum;
/** The largest page (the `pageSize` parameter's maximum). */
export const MAX_PAGE_SIZE: number = parameterSchema('pageSize').maximum;

/** `YYYY-MM-DDTHH:MM:SSZ` in UTC (spec). */
export const TIMESTAMP_PATTERN = new RegExp(componentSchema('Timestamp').pattern);

export function toServiceTimestamp(date: Date): string {
	return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/* ------------------------------------------------------------------------ records */

export type InvoiceStatus = 'issued' | 'paid' | 'overdue' | 'cancelled';
export const INVOICE_STATUSES: readonly InvoiceStatus[] = componentSchema('InvoiceStatus').enum;

export interface InvoiceLine {
	description: string | null;
	quantity: number;
	unitPrice: number;
	amount: number;
	assetId: string | null;
}

export interface Invoice {
	invoiceNumber: string;
	customerNumber: string;
	issueDate: string;
	dueDate: string | null;
	status: InvoiceStatus;
	currency: string;
	totalAmount: number;
	taxAmount: number | null;
	updatedAt: string;
	lines: InvoiceLine[];
}

export interface InvoiceFilters {
	issuedFrom?: string;
	issuedTo?: string;
	updatedFrom?: string;
	updatedTo?: string;
	status?: InvoiceStatus;
	customerNumber?: string;
}

export type AssetStatus = 'active' | 'inactive' | 'retired';
export const ASSET_STATUSES: readonly AssetStatus[] = componentSchema('AssetStatus').enum;

export interface Asset {
	assetId: string;
	serialNumber: string | null;
	type: string;
	model: string | null;
	site: string | null;
	customerNumber: string;
	status: AssetStatus;
	contractEnd: string | null;
	updatedAt: string;
}

export interface AssetFilters {
	status?: AssetStatus;
	type?: string;
	site?: string;
	customerNumber?: string;
	serialNumber?: string;
	updatedFrom?: string;
	updatedTo?: string;
}

/** The page envelope of every list; `totalItems` is null from a service that does not count. */
export interface Page<T> {
	items: T[];
	page: number;
	pageSize: number;
	totalItems: number | null;
}

/** The assets an invoice bills: its lines' asset IDs, once each. */
export function billedAssetIds(invoice: Invoice): string[] {
	const ids = invoice.lines.map((line) => line.assetId);
	return [...new Set(ids.filter((id): id is string => typeof id === 'string' && id !== ''))];
}

/* ------------------------------------------------------------------ subscriptions */

export const EVENT_TYPES: readonly string[] = componentSchema('EventType').enum;

export interface SubscriptionRequest {
	notificationUrl: string;
	eventTypes: string[] | null;
	description: string | null;
}

export interface Subscription {
	id: string;
	notificationUrl: string;
	eventTypes: string[] | null;
	description: string | null;
	createdAt: string;
}

/** The delete call's 404 code for a subscription the caller does not have. */
export const SUBSCRIPTION_NOT_FOUND_ERROR: string = resolveRef(
	'#/components/schemas/SubscriptionNotFound',
).allOf[1].properties.code.const;

/** Deliveries go only to https addresses (TLS 1.2 or later; spec). */
export const NOTIFICATION_URL_PROTOCOL = 'https:';

/** The query argument of the notification address that carries the delivery key. */
export const DELIVERY_KEY_PARAMETER: string = resolveRef('#/webhooks/serviceEvent/post')
	.parameters[0].name;

/* ------------------------------------------------------------------------- events */

/** The body of a delivery. */
export interface ServiceEvent {
	eventId: string;
	eventType: string;
	occurredAt: string | null;
	subscriptionId: string | null;
	data: Record<string, unknown> | null;
}
