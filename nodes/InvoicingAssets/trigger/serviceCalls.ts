import type { IHookFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import type { ServiceClient } from '../transport';
import { paths, SUBSCRIPTION_NOT_FOUND_ERROR, type Subscription } from '../transport/contract';
import { readDeliveryKey } from '../transport/notificationUrl';
import { deliveryKeyMatches, hashDeliveryKey } from './deliveryKey';

/** Where users find what the package assumes about the service. */
export const SEE_SERVICE_CONTRACT =
	'The package’s assumptions about the service are listed in docs/service-contract.md in its repository.';

/**
 * Deletes a subscription: 'deleted', or 'not found' when the service does not know it (for this
 * API key), which counts as deleted too. A 404 that does not say the subscription is unknown may
 * come from a wrong path or a gateway: then the list decides. Other failures are thrown (n8n
 * retries the delete).
 */
export async function removeSubscription(
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
	const listed = await client.listSubscriptions();
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

/** Whether a listed subscription's notification URL carries the key of `deliveryKeyHash`. */
export function carriesKeyHash(subscription: Subscription, deliveryKeyHash: string): boolean {
	return deliveryKeyMatches(
		readDeliveryKey(String(subscription.notificationUrl ?? '')),
		deliveryKeyHash,
	);
}

export function carriesKey(subscription: Subscription, deliveryKey: string): boolean {
	return carriesKeyHash(subscription, hashDeliveryKey(deliveryKey));
}

/** The HTTP status of a NodeApiError from the transport, if it has one. */
export function httpStatusOf(error: unknown): number | undefined {
	const code = Number((error as { httpCode?: unknown } | undefined)?.httpCode);
	return Number.isInteger(code) && code >= 100 ? code : undefined;
}

export function messageOf(error: unknown): string {
	const message = (error as { message?: unknown } | undefined)?.message;
	return typeof message === 'string' ? message : String(error);
}
