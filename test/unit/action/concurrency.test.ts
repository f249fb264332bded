/* eslint-disable @n8n/community-nodes/no-restricted-globals */
import {
	createLimiter,
	mapWithConcurrency,
} from '../../../nodes/InvoicingAssets/actions/concurrency';

const pause = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms));

describe('mapWithConcurrency', () => {
	test('keeps the input order when later items finish first, and never exceeds the limit', async () => {
		const input = Array.from({ length: 40 }, (_, index) => index);
		let inFlight = 0;
		let most = 0;
		const finished: number[] = [];
		const results = await mapWithConcurrency(input, 6, async (value, index) => {
			expect(index).toBe(value);
			inFlight += 1;
			most = Math.max(most, inFlight);
			await pause((40 - value) % 7);
			inFlight -= 1;
			finished.push(value);
			return value * 10;
		});
		expect(results).toEqual(input.map((value) => value * 10));
		expect(most).toBe(6);
		expect(finished).not.toEqual(input);
	});

	test('runs everything at once when the limit is above the item count', async () => {
		let inFlight = 0;
		let most = 0;
		await mapWithConcurrency([1, 2, 3], 32, async () => {
			inFlight += 1;
			most = Math.max(most, inFlight);
			await pause(2);
			inFlight -= 1;
		});
		expect(most).toBe(3);
	});

	test('an empty list gives an empty result without calling the task', async () => {
		const task = jest.fn();
		await expect(mapWithConcurrency([], 4, task)).resolves.toEqual([]);
		expect(task).not.toHaveBeenCalled();
	});
});

describe('createLimiter', () => {
	test('tasks started from many places at different times never exceed the limit together', async () => {
		const limit = createLimiter(3);
		let inFlight = 0;
		let most = 0;
		const task = (id: number) => async () => {
			inFlight += 1;
			most = Math.max(most, inFlight);
			await pause((id * 7) % 5);
			inFlight -= 1;
			return id;
		};
		// Three callers, each adding tasks over time, like items that run side by side.
		const callers = [0, 1, 2].map(async (caller) => {
			const results: number[] = [];
			for (let n = 0; n < 10; n++) {
				const ids = [caller * 100 + n * 2, caller * 100 + n * 2 + 1];
				results.push(...(await Promise.all(ids.map(async (id) => await limit(task(id))))));
			}
			return results;
		});
		const results = await Promise.all(callers);
		expect(results.flat()).toHaveLength(60);
		expect(most).toBe(3);
	});

	test('waiting tasks start in the order they arrived', async () => {
		const limit = createLimiter(1);
		const started: string[] = [];
		await Promise.all(
			['a', 'b', 'c', 'd'].map(
				async (name, index) =>
					await limit(async () => {
						started.push(name);
						await pause(4 - index);
					}),
			),
		);
		expect(started).toEqual(['a', 'b', 'c', 'd']);
	});

	test('a failing task frees its place; the failure reaches its caller only', async () => {
		const limit = createLimiter(1);
		const failed = limit(async () => {
			await pause(1);
			throw new Error('refused');
		});
		const next = limit(async () => 'next');
		await expect(failed).rejects.toThrow('refused');
		await expect(next).resolves.toBe('next');
	});
});
