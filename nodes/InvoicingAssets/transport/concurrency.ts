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
