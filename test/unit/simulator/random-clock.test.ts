import { SimulatorClock } from '../../simulator/clock';
import { createRandom } from '../../simulator/random';

describe('createRandom', () => {
	test('the same seed gives the same sequence; another seed another one', () => {
		const a = createRandom('seed-1');
		const b = createRandom('seed-1');
		const c = createRandom('seed-2');
		const take = (random: ReturnType<typeof createRandom>) =>
			Array.from({ length: 20 }, () => random.next());
		const sequence = take(a);
		expect(take(b)).toEqual(sequence);
		expect(take(c)).not.toEqual(sequence);
		expect(take(createRandom(42))).toEqual(take(createRandom(42)));
	});

	test('int stays within bounds and reaches both ends; pick and chance behave', () => {
		const random = createRandom(7);
		const seen = new Set<number>();
		for (let i = 0; i < 2000; i++) {
			const value = random.int(3, 6);
			expect(value).toBeGreaterThanOrEqual(3);
			expect(value).toBeLessThanOrEqual(6);
			seen.add(value);
		}
		expect([...seen].sort()).toEqual([3, 4, 5, 6]);
		expect(['a', 'b']).toContain(random.pick(['a', 'b']));
		expect(() => random.pick([])).toThrow(/empty/);
		const hits = Array.from({ length: 4000 }, () => random.chance(0.25)).filter(Boolean).length;
		expect(hits).toBeGreaterThan(800);
		expect(hits).toBeLessThan(1200);
	});
});

describe('SimulatorClock', () => {
	test('is real time plus an offset that only grows', () => {
		const clock = new SimulatorClock();
		expect(Math.abs(clock.nowMs() - Date.now())).toBeLessThan(50);
		clock.advance(90 * 60 * 1000);
		expect(clock.offsetMs).toBe(90 * 60 * 1000);
		expect(clock.now().getTime() - Date.now()).toBeGreaterThan(89 * 60 * 1000);
		expect(clock.timestamp()).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
		expect(() => clock.advance(-1)).toThrow(/forward/);
		expect(() => clock.advance(Number.NaN)).toThrow(/forward/);
	});
});
