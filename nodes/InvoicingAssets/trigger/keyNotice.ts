import type { IWebhookFunctions } from 'n8n-workflow';

import { CREDENTIAL_TYPE } from '../transport/tokenRenewal';
import { logContext, ownershipOf } from './ownership';
import type { StoredSubscription } from './state';

/**
 * How often, at most, webhook() reads a trigger's credential (in this n8n process) to see whether
 * its subscription was made with an API key the credential no longer holds: rarely enough to keep
 * the delivery path fast, often enough to be seen in the day the README leaves before the old key
 * is deleted.
 */
export const KEY_CHECK_INTERVAL_MS = 5 * 60_000;

/** When each trigger's credential was last read, per trigger (workflow, node and URL). */
const lastChecks = new Map<string, number>();

/**
 * Logs a warning when the subscription that delivers to this trigger was made with another API
 * key or Base URL than the credential holds now: a published workflow left out of the README's
 * step 3 (unpublish and publish) would stop without a word once the old key is deleted. At most
 * one credential read per trigger every KEY_CHECK_INTERVAL_MS; a read that fails says nothing.
 */
export async function warnIfMadeWithAnotherKey(
	context: IWebhookFunctions,
	trigger: string,
	stored: StoredSubscription,
	now = Date.now(),
): Promise<void> {
	if (stored.clientId === undefined) return;
	const last = lastChecks.get(trigger);
	if (last !== undefined && now - last < KEY_CHECK_INTERVAL_MS) return;
	lastChecks.set(trigger, now);
	const credentials = await context.getCredentials(CREDENTIAL_TYPE).catch(() => undefined);
	if (!credentials) return;
	const ownership = ownershipOf(stored, context.getWorkflow().id, credentials);
	if (ownership.owner !== 'another key') return;
	context.logger.warn(
		`Invoicing & Assets Trigger: this workflow's subscription ${stored.subscriptionId} was created with ${ownership.madeWith}. Unpublish this workflow and publish it again (n8n 1.x: deactivate, then activate) before that key is deleted: its events stop with that key, and nothing else will say so`,
		logContext(context),
	);
}

/** Forgets every check (for tests: a new n8n process). */
export function forgetKeyChecks() {
	lastChecks.clear();
}
