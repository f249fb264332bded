/** Watching a trigger's subscriptions at the simulator exactly, as they are created. */
import type { Subscription } from '../../nodes/InvoicingAssets/transport/contract';
import type { Simulator } from '../simulator';

export interface SubscriptionWatch {
	/** The most subscriptions of the trigger held at once, counted after every create. */
	readonly most: number;
	/** Subscriptions created for the trigger while watching. */
	readonly created: number;
	/** The trigger's subscriptions now. */
	ours(): Subscription[];
	/** Stops watching (the store's create is restored). */
	stop(): void;
}

/**
 * Counts the subscriptions whose notification URL holds `webhookId` right after each create at
 * the service, the only moment their number can grow, so that a second subscription held only
 * for a moment cannot slip between two polls.
 */
export function watchSubscriptions(sim: Simulator, webhookId: string): SubscriptionWatch {
	const store = sim.subscriptions;
	const ours = () =>
		store.list().filter((subscription) => subscription.notificationUrl.includes(webhookId));
	const original = store.create;
	let most = ours().length;
	let created = 0;
	store.create = (...args) => {
		const subscription = original.apply(store, args);
		if (subscription.notificationUrl.includes(webhookId)) created += 1;
		most = Math.max(most, ours().length);
		return subscription;
	};
	return {
		get most() {
			return most;
		},
		get created() {
			return created;
		},
		ours,
		stop: () => {
			store.create = original;
		},
	};
}
