/** Runs `task` over `items` with at most `limit` in flight; results keep the input order. */
export async function mapWithConcurrency<T, R>(
	items: readonly T[],
	limit: number,
	task: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
	const results = new Array<R>(items.length);
	let next = 0;
	const worker = async () => {
		while (next < items.length) {
			const index = next++;
			results[index] = await task(items[index], index);
		}
	};
	const width = Number.isInteger(limit) && limit > 1 ? Math.min(limit, items.length) : 1;
	const workers = Array.from({ length: width }, worker);
	await Promise.all(workers);
	return results;
}

/**
 * A bound shared by tasks that start from many places (e.g. from items that run side by side):
 * the returned function runs its task once fewer than `limit` of its tasks are in flight.
 */
export function createLimiter(limit: number): <R>(task: () => Promise<R>) => Promise<R> {
	const width = Number.isInteger(limit) && limit > 1 ? limit : 1;
	const waiting: Array<() => void> = [];
	let inFlight = 0;
	// A finished task hands its slot straight to the next waiting one, so no newcomer can slip in between.
	const release = () => {
		const next = waiting.shift();
		if (next) next();
		else inFlight -= 1;
	};
	return async <R>(task: () => Promise<R>): Promise<R> => {
		if (inFlight < width) inFlight += 1;
		else await new Promise<void>((resolve) => waiting.push(resolve));
		try {
			return await task();
		} finally {
			release();
		}
	};
}
