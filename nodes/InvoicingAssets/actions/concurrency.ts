/**
 * A bound shared by tasks that start from many places (e.g. from items that run side by side):
 * the returned function runs its task once fewer than `limit` (at least 1) of its tasks are in flight.
 */
export function createLimiter(limit: number): <R>(task: () => Promise<R>) => Promise<R> {
	const waiting: Array<() => void> = [];
	let inFlight = 0;
	// A finished task hands its slot straight to the next waiting one, so no newcomer can slip in between.
	const release = () => {
		const next = waiting.shift();
		if (next) next();
		else inFlight -= 1;
	};
	return async <R>(task: () => Promise<R>): Promise<R> => {
		if (inFlight < limit) inFlight += 1;
		else await new Promise<void>((resolve) => waiting.push(resolve));
		try {
			return await task();
		} finally {
			release();
		}
	};
}

/** Runs `task` over `items`, at most `limit` at a time, in their order; results keep the input order. */
export async function mapWithConcurrency<T, R>(
	items: readonly T[],
	limit: number,
	task: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
	const limited = createLimiter(limit);
	return await Promise.all(
		items.map(async (item, index) => await limited(async () => await task(item, index))),
	);
}
