import { createHash } from 'node:crypto';

import type { IDataObject } from 'n8n-workflow';

import {
	DELIVERY_KEY_PARAMETER,
	type Subscription,
} from '../../../nodes/InvoicingAssets/transport/contract';
import { startTestbed, type Testbed } from '../../harness/testbed';
export { eventually } from '../../harness/eventually';
import { TriggerHost, type TriggerHostOptions } from '../../harness/webhooks';

/** Retries of failed deliveries come quickly in these tests. */
export const FAST_RETRIES = [50, 50];

export async function startTriggerTestbed(): Promise<Testbed> {
	return await startTestbed({
		invoices: 10,
		assets: 10,
		delivery: { retrySchedule: FAST_RETRIES },
	});
}

export async function startHost(
	testbed: Testbed,
	parameters: IDataObject = { events: ['*'] },
	publicUrl?: string,
	more: Partial<Pick<TriggerHostOptions, 'credential' | 'workflowId' | 'webhookId'>> = {},
): Promise<TriggerHost> {
	return await TriggerHost.start({
		harness: testbed.harness,
		caDir: testbed.sim.caDir,
		parameters,
		publicUrl,
		...more,
		credential: more.credential ?? testbed.credential,
	});
}

/** Puts the simulator back as it was: no subscriptions, faults, duplicates, old records or list shape. */
export async function resetSimulator(testbed: Testbed) {
	const { sim } = testbed;
	await sim.waitForDeliveries(10_000);
	sim.faults.clear();
	sim.setListShape({});
	for (const subscription of sim.subscriptions.list()) sim.subscriptions.delete(subscription.id);
	sim.deliveries.setOptions({ duplicate: false, retrySchedule: FAST_RETRIES });
	sim.deliveries.reset();
	sim.log.reset();
}

/** The only subscription at the simulator (fails the test when there is not exactly one). */
export function onlySubscription(testbed: Testbed): Subscription {
	const subscriptions = testbed.sim.subscriptions.list();
	expect(subscriptions).toHaveLength(1);
	return subscriptions[0];
}

/**
 * What the trigger stores, besides the subscription's ID and key hash, about whose subscription it
 * is: the workflow, the API key's client ID and the Base URL (of the testbed's default credential).
 */
export function ownership(testbed: Testbed, host: TriggerHost) {
	return {
		workflowId: host.workflowId,
		clientId: testbed.sim.defaultClient.clientId,
		baseUrl: testbed.sim.serviceUrl,
	};
}

/** The subscription lists asked for after the first create call since the log was reset. */
export function listsAfterCreate(testbed: Testbed): number {
	const [create] = testbed.sim.log.entries({ route: 'subscriptions.create' });
	if (!create) return 0;
	return testbed.sim.log
		.entries({ route: 'subscriptions.list' })
		.filter((entry) => entry.seq > create.seq).length;
}

/** The delivery key in a subscription's notification URL, as the simulator stores it. */
export function keyOf(subscription: Subscription): string {
	const key = new URL(subscription.notificationUrl).searchParams.get(DELIVERY_KEY_PARAMETER);
	if (!key) throw new Error(`No ${DELIVERY_KEY_PARAMETER} in the subscription's URL`);
	return key;
}

export function sha256Hex(text: string): string {
	return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The URL without its query, to compare addresses. */
export function withoutQuery(url: string): string {
	const parsed = new URL(url);
	parsed.search = '';
	return parsed.toString();
}
