/**
 * The webhook trigger's subscription at the service: its checkExists, create and delete, each an
 * entry point that reads top to bottom, followed by the steps they share. What the trigger keeps
 * in static data and whose a stored subscription is: state.ts; the delivery key: deliveryKey.ts.
 */
import type { IDataObject, IHookFunctions } from 'n8n-workflow';
import { NodeOperationError, sleep } from 'n8n-workflow';

import { CHOOSE_EVENT_TYPES, selectedEventTypes } from '../shared/events';
import { ServiceClient } from '../transport';
import {
	API_KEY_MAX_LIFETIME_MONTHS,
	CLOCKS_DIFFER_BY_LESS_THAN_MS,
	DELIVERY_RETRIES_END_WITHIN_MS,
	LATE_CREATE_RECHECK_DELAYS_MS,
	NOTIFICATION_URL_PROTOCOL,
	paths,
	SERVICE_TIME_HEADER,
	SUBSCRIPTION_NOT_FOUND_ERROR,
	toServiceTimestamp,
	type Subscription,
	type SubscriptionRequest,
} from '../transport/contract';
import { httpStatusOf } from '../transport/errors';
import { readDeliveryKey, withDeliveryKey, withoutDeliveryKey } from '../transport/notificationUrl';
import { listSubscriptions } from '../transport/pageReader';
import {
	readCreatedSubscriptionId,
	readHeader,
	readHttpDate,
	readServiceTime,
} from '../transport/responses';
import { baseUrlOf, clientIdOf } from '../transport/tokenBinding';
import {
	carriesKeyHash,
	generateDeliveryKey,
	hashDeliveryKey,
	madeBy,
	type KeyMaker,
} from './deliveryKey';
import {
	awaitsReplacement,
	forgetSubscription,
	logLine,
	noteReplacement,
	ownershipOf,
	readStoredSubscription,
	retireSubscription,
	storeSubscription,
	type StoredSubscription,
} from './state';

export const WEBHOOK_NAME = 'default';

/**
 * checkExists: true only when the subscription this trigger created still exists for its current
 * URL, with its delivery key and the selected events. Otherwise it is deleted before it is
 * forgotten: listed for an address n8n no longer uses (e.g. N8N_WEBHOOK_URL changed) or for other
 * events, or not listed, in case the list does not show everything. One of another workflow or
 * another API key is left to its owner (endStoredSubscription).
 */
export async function subscriptionExists(context: IHookFunctions): Promise<boolean> {
	const staticData = context.getWorkflowStaticData('node');
	const client = new ServiceClient(context);
	const stored = readStoredSubscription(staticData);
	if (!stored) return false;
	const credentials = await client.credentials();
	if (ownershipOf(stored, context.getWorkflow().id, credentials).owner !== 'this trigger') {
		await endStoredSubscription(context, client, staticData);
		return false;
	}
	const listed = await listSubscriptions(client);
	const ours = listed.find((subscription) => subscription.id === stored.subscriptionId);
	if (ours && !carriesKeyHash(ours, stored.deliveryKeyHash)) {
		// Listed under this ID, but without this trigger's key: not this trigger's to delete.
		forgetSubscription(staticData);
		return false;
	}
	if (
		ours &&
		sameAddress(ours.notificationUrl, context.getNodeWebhookUrl(WEBHOOK_NAME)) &&
		sameEventTypes(ours.eventTypes, requireEventTypes(context))
	) {
		return true;
	}
	await removeSubscription(context, client, stored.subscriptionId);
	forgetSubscription(staticData);
	return false;
}

/**
 * create: a new subscription with a new delivery key; stores the ID and the key's SHA-256 only.
 * A publish first deletes what this trigger left behind at its webhook URL (removeLeftovers), and
 * afterwards notes the new subscription's creation for a replaced key's subscription that still
 * delivers (noteReplacedAt).
 */
export async function createSubscription(context: IHookFunctions): Promise<void> {
	const webhookUrl = requireHttpsWebhookUrl(context);
	const eventTypes = requireEventTypes(context);
	const staticData = context.getWorkflowStaticData('node');
	const client = new ServiceClient(context);
	const production = registersProductionUrl(context);
	await endStoredSubscription(context, client, staticData);
	if (production) await removeLeftovers(context, client, webhookUrl);

	const credentials = await client.credentials();
	const deliveryKey = generateDeliveryKey(keyMakerOf(context));
	const options = context.getNodeParameter('options', {}) as IDataObject;
	const request: SubscriptionRequest = {
		notificationUrl: withDeliveryKey(webhookUrl, deliveryKey),
		eventTypes,
		description:
			typeof options.description === 'string' && options.description.trim() !== ''
				? options.description.trim()
				: null,
	};
	const created = await client
		.requestFull({ method: 'POST', path: paths.subscriptions, body: { ...request } })
		.then(
			(response) => ({
				id: readCreatedSubscriptionId(response.body),
				madeAt: readHttpDate(readHeader(response.headers, SERVICE_TIME_HEADER)),
				failure: undefined,
			}),
			(error: unknown) => ({ id: undefined, madeAt: undefined, failure: error }),
		);
	const adopted =
		created.id === undefined
			? await adoptUnconfirmedCreate(context, client, deliveryKey, created.failure)
			: undefined;
	const subscriptionId = created.id ?? adopted?.id ?? '';
	const madeAt = created.id !== undefined ? created.madeAt : readServiceTime(adopted?.createdAt);
	const keyExpiresOn = String(credentials.keyExpiresOn ?? '').trim();
	storeSubscription(staticData, {
		subscriptionId,
		deliveryKeyHash: hashDeliveryKey(deliveryKey),
		workflowId: context.getWorkflow().id,
		clientId: clientIdOf(credentials),
		baseUrl: baseUrlOf(credentials),
		createdAt: toServiceTimestamp(new Date(madeAt ?? Date.now())),
		keyExpiresOn: keyExpiresOn === '' ? undefined : keyExpiresOn,
		registeredFor: production ? 'production' : 'test',
	});
	if (production && awaitsReplacement(staticData)) noteReplacedAt(context, staticData, madeAt);
}

/**
 * delete: removes the stored subscription (already gone counts as removed) and forgets it; one
 * another key made may be left to end with its key (endStoredSubscription). After the production
 * subscription, whatever this trigger left behind at that URL goes too.
 */
export async function deleteSubscription(context: IHookFunctions): Promise<void> {
	const staticData = context.getWorkflowStaticData('node');
	const client = new ServiceClient(context);
	const stored = readStoredSubscription(staticData);
	await endStoredSubscription(context, client, staticData);
	const webhookUrl = context.getNodeWebhookUrl(WEBHOOK_NAME);
	if (stored?.registeredFor === 'production' && webhookUrl) {
		await removeLeftovers(context, client, webhookUrl);
	}
}

/* ------------------------------------------------------------- the webhook URL and events */

const HTTPS_FIX =
	'The Data Service delivers events only over HTTPS secured with TLS 1.2 or later; it refuses plain http addresses. ' +
	'To fix it, give n8n a public https address: set N8N_WEBHOOK_URL to it (for example https://n8n.example.com/), ' +
	'or serve n8n over HTTPS itself with N8N_PROTOCOL=https plus N8N_SSL_KEY and N8N_SSL_CERT, ' +
	'or put n8n behind a TLS-terminating reverse proxy and set N8N_WEBHOOK_URL to the proxy’s https address. ' +
	'The editor’s test URL (used while you test this step with "Execute step") follows the same rule as the production URL.';

/** The essence of HTTPS_FIX, for the message: n8n shows only the message of a failed publish. */
const SET_PUBLIC_HTTPS_ADDRESS = 'Set N8N_WEBHOOK_URL to n8n’s public https address.';

/** Whether the hook registers the production URL (a publish), not the editor's test URL. */
function registersProductionUrl(context: IHookFunctions): boolean {
	return context.getActivationMode() !== 'manual';
}

/** n8n's webhook URL for this trigger; refused unless it is https, because the service delivers nowhere else. */
function requireHttpsWebhookUrl(context: IHookFunctions): string {
	const webhookUrl = context.getNodeWebhookUrl(WEBHOOK_NAME) ?? '';
	const which = registersProductionUrl(context) ? 'production' : 'test';
	if (!URL.canParse(webhookUrl) || new URL(webhookUrl).protocol !== NOTIFICATION_URL_PROTOCOL) {
		throw new NodeOperationError(
			context.getNode(),
			`The ${which} webhook URL must start with https://: the Data Service delivers only over TLS 1.2 or later. ${SET_PUBLIC_HTTPS_ADDRESS}`,
			{ description: `n8n’s ${which} webhook URL for this trigger is ${webhookUrl}. ${HTTPS_FIX}` },
		);
	}
	return webhookUrl;
}

/** The service's `eventTypes` for the Events parameter; an empty selection is refused, never read as "all". */
function requireEventTypes(context: IHookFunctions): string[] | null {
	const eventTypes = selectedEventTypes(context.getNodeParameter('events', []));
	if (eventTypes === undefined) {
		throw new NodeOperationError(
			context.getNode(),
			`No Events are selected: ${CHOOSE_EVENT_TYPES}`,
			{
				description:
					'The trigger subscribes only to the events chosen under Events. Choose the events that should start the workflow, or All Events to receive every event, including types added later, then publish again.',
			},
		);
	}
	return eventTypes;
}

/** Whether a listed subscription takes exactly the selected events (null: every event). */
function sameEventTypes(listed: unknown, selected: string[] | null): boolean {
	if (listed === null || listed === undefined || selected === null) {
		return (listed === null || listed === undefined) && selected === null;
	}
	if (!Array.isArray(listed)) return false;
	const wanted = new Set(selected);
	return new Set(listed).size === wanted.size && listed.every((type) => wanted.has(type));
}

/** Whether a subscription's address (key aside) is n8n's webhook URL; an unreadable one is not judged. */
function sameAddress(notificationUrl: unknown, webhookUrl: string | undefined): boolean {
	const listed = withoutDeliveryKey(String(notificationUrl ?? ''));
	const current = withoutDeliveryKey(webhookUrl ?? '');
	return listed === undefined || current === undefined || listed === current;
}

/* ------------------------------------------------------------------ a create's lost answer */

/** What becomes of a subscription the trigger made but could not keep the key of. */
const LEFT_BEHIND_ADVICE =
	'publishing the workflow again deletes any subscription this trigger left at its webhook URL';

/**
 * The create call failed, or succeeded without an ID the node can read. The service may have
 * created the subscription all the same (an answer lost on the way back). Only this call knows
 * the new delivery key, so a subscription carrying it is certainly ours: it is adopted, and any
 * further copy deleted. Without one, the failure is thrown; one the service makes later carries
 * this trigger's tag of origin, so the next publish deletes it (removeLeftovers).
 */
async function adoptUnconfirmedCreate(
	context: IHookFunctions,
	client: ServiceClient,
	deliveryKey: string,
	failure: unknown,
): Promise<Subscription> {
	// A refusal (4xx) means the service created nothing.
	const status = httpStatusOf(failure);
	if (status !== undefined && status >= 400 && status < 500) throw failure;

	// The service may make it a moment after the failure: look again a few times before
	// concluding that it made none.
	const keyHash = hashDeliveryKey(deliveryKey);
	const lookForKey = async () =>
		await listSubscriptions(client).then(
			(listed) => ({
				ours: listed.filter((item) => carriesKeyHash(item, keyHash)),
				error: undefined as unknown,
			}),
			(error: unknown) => ({ ours: [] as Subscription[], error }),
		);
	let lookup = await lookForKey();
	for (const delay of LATE_CREATE_RECHECK_DELAYS_MS) {
		if (lookup.error !== undefined || lookup.ours.length > 0) break;
		await sleep(delay);
		lookup = await lookForKey();
	}
	if (lookup.error !== undefined) {
		const note =
			`The node could not check whether the service created the subscription anyway (${messageOf(lookup.error)}). ` +
			'If it did, that subscription cannot start this workflow, because its key was not kept; ' +
			'its key shows that this trigger made it, so the trigger deletes it when the workflow is published again.';
		if (failure === undefined) {
			throw new NodeOperationError(
				context.getNode(),
				`The service answered without the new subscription’s ID, and the node could not check whether it created one: ${LEFT_BEHIND_ADVICE}`,
				{ description: note },
			);
		}
		throw withAdvice(
			failure,
			`the node could not check whether the service created the subscription anyway: ${LEFT_BEHIND_ADVICE}`,
			note,
		);
	}
	const [adopted, ...copies] = lookup.ours;
	for (const copy of copies) {
		const leftover = await removeSubscription(context, client, copy.id).then(
			() => undefined,
			(error: unknown) => error,
		);
		if (leftover !== undefined) {
			const ids = lookup.ours.map((item) => item.id).join(', ');
			throw withAdvice(
				leftover,
				`subscriptions ${ids} were all created for this trigger and not all could be removed: delete them with the Invoicing & Assets node`,
				`Subscriptions ${ids} were all created for this trigger and could not all be removed: delete them with the Invoicing & Assets node (Subscription → Delete). n8n will create a new one.`,
			);
		}
	}
	if (adopted) return adopted;
	if (failure !== undefined) {
		throw withAdvice(
			failure,
			`no subscription for it showed up at the service; should one show up later, ${LEFT_BEHIND_ADVICE}`,
			`The node looked for the subscription ${LATE_CREATE_RECHECK_DELAYS_MS.length + 1} times over ${LATE_CREATE_RECHECK_DELAYS_MS.reduce((sum, ms) => sum + ms, 0) / 1000} s and found none, so nothing was registered; n8n will try again. Should the service still make it later, it cannot start this workflow (its key was not kept), and its key shows that this trigger made it: the trigger deletes it when the workflow is published again.`,
		);
	}
	throw new NodeOperationError(
		context.getNode(),
		'The service answered without the new subscription’s ID',
		{
			description:
				'No subscription for this trigger exists at the service either, so nothing was registered. n8n will try again; if this persists, the Data Service’s answer format may have changed: please report it.',
		},
	);
}

/**
 * The error with `advice` added to its message (all n8n shows of a failed publish) and `note` to
 * its description (shown under the message elsewhere).
 */
function withAdvice(error: unknown, advice: string, note: string): unknown {
	if (typeof error !== 'object' || error === null) return error;
	const described = error as { message?: unknown; description?: unknown };
	const message = typeof described.message === 'string' ? described.message : '';
	described.message = message === '' ? advice : `${message.replace(/[.:;\s]+$/, '')}; ${advice}`;
	const before = typeof described.description === 'string' ? `${described.description} ` : '';
	described.description = `${before}${note}`;
	return error;
}

/* ------------------------------------------------------------------- ending a subscription */

/** Where users find what the package assumes about the service. */
const SEE_SERVICE_CONTRACT =
	'The package’s assumptions about the service are listed in docs/service-contract.md in its repository.';

/**
 * Ends the stored subscription and forgets it, so that publishing and unpublishing never fail
 * because of whose it is. This trigger's is deleted (a failure is thrown, and it stays stored);
 * another workflow's is left untouched; another key's is deleted if the current key can, else
 * left to end with its own key (leaveToItsKey).
 */
async function endStoredSubscription(
	context: IHookFunctions,
	client: ServiceClient,
	staticData: IDataObject,
): Promise<void> {
	const stored = readStoredSubscription(staticData);
	if (!stored) return;
	const ownership = ownershipOf(stored, context.getWorkflow().id, await client.credentials());
	if (ownership.owner === 'this trigger') {
		await removeSubscription(context, client, stored.subscriptionId);
	} else if (ownership.owner === 'another key') {
		await leaveToItsKey(context, client, staticData, stored, ownership.madeWith);
	}
	forgetSubscription(staticData);
}

/**
 * A subscription another API key (or Base URL) made. The contract has it belong to that key, so
 * that the current key's delete is answered "not found"; should the service let the current key
 * delete it after all, it is deleted. Otherwise it ends with its own key, and is kept as retiring
 * (state.ts): its deliveries are let in for DELIVERY_RETRIES_END_WITHIN_MS after its replacement,
 * for the service's retries of what fell between unpublish and publish. When its key has certainly
 * expired, it is simply forgotten. Nothing here is thrown: n8n's log says what happened.
 */
async function leaveToItsKey(
	context: IHookFunctions,
	client: ServiceClient,
	staticData: IDataObject,
	stored: StoredSubscription,
	madeWith: string,
): Promise<void> {
	const id = stored.subscriptionId;
	const keyEnd = keyEndOf(stored);
	if (keyEnd !== undefined && keyEnd.getTime() <= Date.now()) {
		logLine(
			context,
			'info',
			`forgot subscription ${id}, created with ${madeWith}; that key has expired, and the subscription with it`,
		);
		return;
	}
	const deleted = await removeSubscription(context, client, id).then(
		(outcome) => ({ outcome, failure: undefined as unknown }),
		(failure: unknown) => ({ outcome: undefined, failure }),
	);
	if (deleted.outcome === 'deleted') {
		logLine(
			context,
			'info',
			`deleted subscription ${id}, created with ${madeWith}; the current credential could delete it`,
		);
		return;
	}
	const endsBy = toServiceTimestamp(new Date(Date.now() + DELIVERY_RETRIES_END_WITHIN_MS));
	retireSubscription(staticData, {
		subscriptionId: id,
		deliveryKeyHash: stored.deliveryKeyHash,
		clientId: stored.clientId ?? '',
		endsBy,
	});
	const until = keyEnd === undefined ? '' : `, at the latest ${toServiceTimestamp(keyEnd)}`;
	const outcome =
		deleted.failure === undefined
			? 'The current credential cannot delete it (the service shows a subscription only to the key that created it)'
			: `The current credential could not delete it (${messageOf(deleted.failure)})`;
	logLine(
		context,
		deleted.failure === undefined ? 'info' : 'warn',
		`subscription ${id} was created with ${madeWith}. ${outcome}; it ends with that key${until}. For a day after this workflow's new subscription is made, the trigger lets in what it still delivers (the service's retries of what it could not deliver meanwhile); after that it refuses its deliveries. Delete the old key in the identity portal once that day is over`,
	);
}

/**
 * When the key a subscription was made with stops working, and the subscription with it
 * (contract.ts, API_KEY_MAX_LIFETIME_MONTHS): its expiry date when the credential said, else
 * twelve months after the subscription's creation at the latest; undefined when neither is known.
 */
function keyEndOf(stored: StoredSubscription): Date | undefined {
	const expiry = Date.parse(stored.keyExpiresOn ?? '');
	if (!Number.isNaN(expiry)) return new Date(expiry);
	const created = Date.parse(stored.createdAt ?? '');
	if (Number.isNaN(created)) return undefined;
	const latest = new Date(created);
	latest.setUTCMonth(latest.getUTCMonth() + API_KEY_MAX_LIFETIME_MONTHS);
	return latest;
}

/**
 * The replaced key's subscriptions learn when their replacement was made, by the service's clock
 * (the create answer's Date header, or the adopted subscription's createdAt): from then on they
 * are let in only for the events the new one may have missed, for a day. Without the service's
 * time every delivery of theirs is let in for that day: Ignore Repeated Deliveries then keeps one
 * of each event. n8n's clock is never put in the service's place.
 */
function noteReplacedAt(context: IHookFunctions, staticData: IDataObject, madeAt?: number) {
	const endsBy = toServiceTimestamp(new Date(Date.now() + DELIVERY_RETRIES_END_WITHIN_MS));
	const replacedAt = madeAt === undefined ? undefined : toServiceTimestamp(new Date(madeAt));
	noteReplacement(staticData, { replacedAt, endsBy });
	if (replacedAt === undefined) {
		logLine(
			context,
			'warn',
			`the service did not say when it made the new subscription (its answer had no Date header), so until ${endsBy} the subscription of the replaced API key may start this workflow for events the new one delivers too. Keep Ignore Repeated Deliveries on (the default): it starts each event once`,
		);
	}
}

/**
 * Deletes a subscription: 'deleted', or 'not found' when the service does not know it (for this
 * API key), which counts as deleted too. A 404 that does not say the subscription is unknown may
 * come from a wrong path or a gateway: then the list decides. Other failures are thrown (n8n
 * retries the delete).
 */
async function removeSubscription(
	context: IHookFunctions,
	client: ServiceClient,
	subscriptionId: string,
): Promise<'deleted' | 'not found'> {
	const failure = await client
		.request({
			method: 'DELETE',
			path: paths.subscription(subscriptionId),
			subject: `Subscription '${subscriptionId}'`,
		})
		.then(
			() => undefined,
			(error: unknown) => error,
		);
	if (failure === undefined) return 'deleted';
	if (httpStatusOf(failure) !== 404) throw failure;
	if (saysSubscriptionNotFound(failure)) return 'not found';
	const listed = await listSubscriptions(client);
	if (!listed.some((subscription) => subscription.id === subscriptionId)) return 'not found';
	throw new NodeOperationError(
		context.getNode(),
		`The delete did not reach subscription '${subscriptionId}': the service answered 404 but still lists it, so its delete address may differ from the package’s service contract`,
		{
			description: `The trigger deleted it with DELETE {Base URL}${paths.subscription(subscriptionId)}, and the answer was a 404 that does not say the subscription is unknown (such as a gateway’s answer to an address it does not know). The subscription still exists and still sends events to this webhook URL; n8n keeps its ID and tries again. ${SEE_SERVICE_CONTRACT} Please report this with the service’s answer.`,
		},
	);
}

/** Whether a failed call's error carries the service's "subscription not found" code. */
export function saysSubscriptionNotFound(error: unknown): boolean {
	const response = (error as { errorResponse?: { code?: unknown } } | undefined)?.errorResponse;
	return response?.code === SUBSCRIPTION_NOT_FOUND_ERROR;
}

function messageOf(error: unknown): string {
	const message = (error as { message?: unknown } | undefined)?.message;
	return typeof message === 'string' ? message : String(error);
}

/* ------------------------------------------------------------------------------ leftovers */

/** n8n listens on a test URL for at most 2 minutes (its test webhook timeout). */
const TEST_LISTEN_MAX_MS = 2 * 60_000;

/**
 * A test subscription older than this, by the service's `createdAt` read against n8n's clock,
 * belongs to a listen that ended without deleting it.
 */
export const TEST_SUBSCRIPTION_MAX_AGE_MS = TEST_LISTEN_MAX_MS + CLOCKS_DIFFER_BY_LESS_THAN_MS;

/** Who makes this trigger's delivery keys: see deliveryKey.ts. */
function keyMakerOf(context: IHookFunctions): KeyMaker {
	return {
		workflowId: String(context.getWorkflow().id ?? ''),
		webhookId: String(context.getNode().webhookId ?? ''),
	};
}

/** Where a notification URL points, its delivery key aside: origin and path segments. */
function addressOf(url: string): { origin: string; segments: string[] } | undefined {
	if (!URL.canParse(url)) return undefined;
	const parsed = new URL(url);
	return { origin: parsed.origin, segments: parsed.pathname.split('/').filter(Boolean) };
}

/**
 * Whether `listed` is the same webhook's address as `ours`, at the same or the other endpoint:
 * n8n's production and test URLs differ only in the segment before the webhook ID and path
 * (`webhook`, `webhook-test`, or what N8N_ENDPOINT_WEBHOOK* name them). Every other segment,
 * and the origin, must be equal: another n8n behind the same host under another path (N8N_PATH)
 * is not this one.
 */
function sameWebhookAddress(
	listed: { origin: string; segments: string[] },
	ours: { origin: string; segments: string[] },
): boolean {
	const endpoint = ours.segments.length - 3;
	return (
		listed.origin === ours.origin &&
		listed.segments.length === ours.segments.length &&
		listed.segments.every(
			(segment, index) => index === endpoint || segment === ours.segments[index],
		)
	);
}

/**
 * Deletes the subscriptions this trigger left behind at its own webhook URL, with the current API
 * key (the only one whose subscriptions the service lists): a create whose answer was lost and that
 * the service made later, an editor test registration that n8n never ended (a restart), one whose
 * ID the static data lost. "Its own" needs proof, never a guess: the subscription's delivery key
 * must carry this trigger's tag (deliveryKey.ts), so nothing made by another workflow, another key
 * or a user's own Subscription → Create is ever touched; and its address must be this n8n's webhook
 * URL or the same webhook's other one (sameWebhookAddress), so another n8n with the same workflow
 * is not. At `webhookUrl` itself every such subscription goes; at the other URL only those older
 * than a test listen can last. A failure is logged, never thrown: the next publish tries again.
 */
async function removeLeftovers(
	context: IHookFunctions,
	client: ServiceClient,
	webhookUrl: string,
): Promise<void> {
	const ours = addressOf(webhookUrl);
	if (!ours || ours.segments.length < 3) return;
	const maker = keyMakerOf(context);
	const now = Date.now();
	const isLeftover = (subscription: Subscription) => {
		const listed = addressOf(String(subscription.notificationUrl ?? ''));
		if (!listed || !sameWebhookAddress(listed, ours)) return false;
		if (!madeBy(readDeliveryKey(String(subscription.notificationUrl)), maker)) return false;
		if (listed.segments.join('/') === ours.segments.join('/')) return true;
		const createdAt = Date.parse(String(subscription.createdAt ?? ''));
		return now - createdAt > TEST_SUBSCRIPTION_MAX_AGE_MS;
	};
	let leftovers: Subscription[];
	try {
		leftovers = (await listSubscriptions(client)).filter(isLeftover);
	} catch (error) {
		logLine(
			context,
			'warn',
			`could not look for subscriptions it left behind (${messageOf(error)}); it looks again at the next publish`,
		);
		return;
	}
	for (const leftover of leftovers) {
		try {
			await removeSubscription(context, client, leftover.id);
			logLine(
				context,
				'info',
				`deleted subscription ${leftover.id}, which it had left behind at its webhook URL (its delivery key proves it was this trigger's)`,
			);
		} catch (error) {
			logLine(
				context,
				'warn',
				`could not delete subscription ${leftover.id}, which it had left behind at its webhook URL (${messageOf(error)}); it tries again at the next publish`,
			);
		}
	}
}
