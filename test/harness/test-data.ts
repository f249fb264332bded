/**
 * What every kind of test enters or makes the same way: the credential a user enters for a
 * simulator key, and an invoice that bills an asset. The in-process harness, the real-n8n suites,
 * the reliability checks and the demo all take them from here, so that a credential field added
 * to the package is added to the tests in one place. Nothing here imports n8n-core.
 */
import { request } from 'undici';

import type { ClientRecord, Simulator } from '../simulator';

/** The fields a user fills in for `client` (by default the simulator's own key). */
export function credentialData(sim: Simulator, client: ClientRecord = sim.defaultClient) {
	return {
		environment: client.environment,
		baseUrl: client.environment === 'sandbox' ? sim.sandboxServiceUrl : sim.serviceUrl,
		identityUrl: sim.identityUrl,
		scope: client.scope,
		clientId: client.clientId,
		clientSecret: client.clientSecret,
	};
}

/**
 * Issues an invoice with one line that bills `asset` (by default the first), for the example
 * workflow that fetches the invoice and then its asset. Returns the invoice and its event.
 */
export function issueInvoiceBillingAnAsset(sim: Simulator, asset = sim.data.assets()[0]) {
	return sim.issueInvoice({
		customerNumber: asset.customerNumber,
		lines: [
			{
				assetId: asset.assetId,
				description: 'Managed service',
				quantity: 1,
				unitPrice: 120,
				amount: 120,
			},
		],
	});
}

/** The simulator's subscriptions whose notification URL belongs to the trigger `webhookId`. */
export function subscriptionsOfHook(sim: Simulator, webhookId: string, clientId?: string) {
	return sim.subscriptions
		.list(clientId)
		.filter((subscription) => subscription.notificationUrl.includes(webhookId));
}

/**
 * Posts `body` to the production URL of the trigger `webhookId` in the n8n at `n8nUrl`, as the
 * service delivers an event; `query` carries the delivery key, or a wrong one.
 */
export async function deliverToHook(
	n8nUrl: string,
	webhookId: string,
	query: string,
	body: unknown,
): Promise<{ status: number; text: string }> {
	const response = await request(`${n8nUrl}/webhook/${webhookId}/webhook${query}`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify(body),
	});
	return { status: response.statusCode, text: await response.body.text() };
}
