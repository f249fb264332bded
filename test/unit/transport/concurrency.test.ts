/* eslint-disable @n8n/community-nodes/no-restricted-globals */
import { mapWithConcurrency } from '../../../nodes/InvoicingAssets/transport/concurrency';

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

	test('a limit below 1 still runs one at a time', async () => {
		let inFlight = 0;
		let most = 0;
		const results = await mapWithConcurrency(['a', 'b', 'c'], 0, async (value) => {
			inFlight += 1;
			most = Math.max(most, inFlight);
			await pause(1);
			inFlight -= 1;
			return value.toUpperCase();
		});
		expect(results).toEqual(['A', 'B', 'C']);
		expect(most).toBe(1);
	});

	test('an empty list gives an empty result without calling the task', async () => {
		const task = jest.fn();
		await expect(mapWithConcurrency([], 4, task)).resolves.toEqual([]);
		expect(task).not.toHaveBeenCalled();
	});
});
