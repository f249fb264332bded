import { clearTimeout, setTimeout } from '../tools/node-apis';

/** Real-time waits that `cancelAll` ends at once (resolving false), so closing leaves no timers. */
export class Sleeper {
	private pending = new Set<{
		timer: ReturnType<typeof setTimeout>;
		resolve: (done: boolean) => void;
	}>();
	private cancelled = false;

	/** Resolves true after `ms`, or false when cancelled. */
	sleep(ms: number): Promise<boolean> {
		if (this.cancelled) return Promise.resolve(false);
		return new Promise((resolve) => {
			const entry = {
				timer: setTimeout(() => {
					this.pending.delete(entry);
					resolve(true);
				}, ms),
				resolve,
			};
			this.pending.add(entry);
		});
	}

	cancelAll() {
		this.cancelled = true;
		for (const entry of this.pending) {
			clearTimeout(entry.timer);
			entry.resolve(false);
		}
		this.pending.clear();
	}
}
