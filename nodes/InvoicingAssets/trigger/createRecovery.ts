import type { IHookFunctions } from 'n8n-workflow';
import { NodeOperationError, sleep } from 'n8n-workflow';

import type { ServiceClient } from '../transport';
import { LATE_CREATE_RECHECK_DELAYS_MS, type Subscription } from '../transport/contract';
import { carriesKey, httpStatusOf, messageOf, removeSubscription } from './serviceCalls';

/** What becomes of a subscription the trigger made but could not keep the key of. */
export const LEFT_BEHIND_ADVICE =
	'publishing the workflow again deletes any subscription this trigger left at its webhook URL';

/**
 * The create call failed, or succeeded without an ID the node can read. The service may have
 * created the subscription all the same (an answer lost on the way back). Only this call knows
 * the new delivery key, so a subscription carrying it is certainly ours: it is adopted, and any
 * further copy deleted. Without one, the failure is thrown; one the service makes later carries
 * this trigger's tag of origin, so the next publish deletes it (leftovers.ts).
 */
export async function settleUnconfirmedCreate(
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
	let lookup = await lookForKey(client, deliveryKey);
	for (const delay of LATE_CREATE_RECHECK_DELAYS_MS) {
		if (lookup.error !== undefined || lookup.ours.length > 0) break;
		await sleep(delay);
		lookup = await lookForKey(client, deliveryKey);
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

/** The subscriptions that carry `deliveryKey`, or why the list could not be read. */
async function lookForKey(
	client: ServiceClient,
	deliveryKey: string,
): Promise<{ ours: Subscription[]; error: unknown }> {
	return await client.listSubscriptions().then(
		(listed) => ({
			ours: listed.filter((item) => carriesKey(item, deliveryKey)),
			error: undefined as unknown,
		}),
		(error: unknown) => ({ ours: [] as Subscription[], error }),
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
