import type { IHookFunctions } from 'n8n-workflow';

import type { ServiceClient } from '../transport';
import { CLOCKS_DIFFER_BY_LESS_THAN_MS, type Subscription } from '../transport/contract';
import { readDeliveryKey } from '../transport/notificationUrl';
import { madeBy, type KeyMaker } from './deliveryKey';
import { logContext } from './ownership';
import { messageOf, removeSubscription } from './serviceCalls';

/** n8n listens on a test URL for at most 2 minutes (its test webhook timeout). */
const TEST_LISTEN_MAX_MS = 2 * 60_000;

/**
 * A test subscription older than this, by the service's `createdAt` read against n8n's clock,
 * belongs to a listen that ended without deleting it.
 */
export const TEST_SUBSCRIPTION_MAX_AGE_MS = TEST_LISTEN_MAX_MS + CLOCKS_DIFFER_BY_LESS_THAN_MS;

/** Who makes this trigger's delivery keys: see deliveryKey.ts. */
export function keyMakerOf(context: IHookFunctions): KeyMaker {
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
 * is not. At `webhookUrl` itself every such subscription goes (except `keep`); at the other URL
 * only those older than a test listen can last. A failure is logged, never thrown: the next
 * publish tries again.
 */
export async function removeLeftovers(
	context: IHookFunctions,
	client: ServiceClient,
	webhookUrl: string,
	options: { keep?: string; otherUrlToo: boolean },
): Promise<void> {
	const ours = addressOf(webhookUrl);
	if (!ours || ours.segments.length < 3) return;
	const maker = keyMakerOf(context);
	const now = Date.now();
	const isLeftover = (subscription: Subscription) => {
		if (subscription.id === options.keep) return false;
		const listed = addressOf(String(subscription.notificationUrl ?? ''));
		if (!listed || !sameWebhookAddress(listed, ours)) return false;
		if (!madeBy(readDeliveryKey(String(subscription.notificationUrl)), maker)) return false;
		if (listed.segments.join('/') === ours.segments.join('/')) return true;
		const createdAt = Date.parse(String(subscription.createdAt ?? ''));
		return options.otherUrlToo && now - createdAt > TEST_SUBSCRIPTION_MAX_AGE_MS;
	};
	let leftovers: Subscription[];
	try {
		leftovers = (await client.listSubscriptions()).filter(isLeftover);
	} catch (error) {
		context.logger.warn(
			`Invoicing & Assets Trigger: could not look for subscriptions it left behind (${messageOf(error)}); it looks again at the next publish`,
			logContext(context),
		);
		return;
	}
	for (const leftover of leftovers) {
		try {
			await removeSubscription(context, client, leftover.id);
			context.logger.info(
				`Invoicing & Assets Trigger: deleted subscription ${leftover.id}, which it had left behind at its webhook URL (its delivery key proves it was this trigger's)`,
				logContext(context),
			);
		} catch (error) {
			context.logger.warn(
				`Invoicing & Assets Trigger: could not delete subscription ${leftover.id}, which it had left behind at its webhook URL (${messageOf(error)}); it tries again at the next publish`,
				logContext(context),
			);
		}
	}
}
