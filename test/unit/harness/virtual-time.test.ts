/**
 * The simulated time the Polling Trigger's in-process tests run on (test/harness/virtual-time.ts):
 * it moves only to the next timer once nothing else can happen, waits that overlap take the
 * longest of them, and the same scenario gives the same result every run.
 */
import { VirtualTime, VIRTUAL_START_MS } from '../../harness/virtual-time';

test('four waits of 1 s started together end after 1 s; one after the other they take 4 s', async () => {
	const time = new VirtualTime();
	const together = await time.run(async () => {
		const started = time.now();
		await Promise.all([1, 2, 3, 4].map(async () => await time.sleep(1000)));
		return time.now() - started;
	});
	const apart = await time.run(async () => {
		const started = time.now();
		for (let wait = 0; wait < 4; wait++) await time.sleep(1000);
		return time.now() - started;
	});
	expect([together, apart]).toEqual([1000, 4000]);
});

test('time stands still outside run, and moves to each timer in turn: by time, then in the order set', async () => {
	const time = new VirtualTime();
	const fired: string[] = [];
	const wait = (name: string, ms: number) =>
		time.sleep(ms).then(() => fired.push(`${name}@${time.now() - VIRTUAL_START_MS}`));
	const pending = [wait('late', 300), wait('first', 100), wait('tie-a', 200), wait('tie-b', 200)];
	expect(time.now()).toBe(VIRTUAL_START_MS);
	await time.run(async () => await Promise.all(pending));
	expect(fired).toEqual(['first@100', 'tie-a@200', 'tie-b@200', 'late@300']);
});

test('work that never ends is an error, not a hang', async () => {
	const time = new VirtualTime();
	await expect(time.run(async () => await new Promise(() => {}))).rejects.toThrow(
		'Simulated time is stuck',
	);
});

test('runs started while time is driven (two polls at once) end together, each with its own result', async () => {
	const time = new VirtualTime();
	const poll = async (ms: number) => await time.run(async () => (await time.sleep(ms), ms));
	expect(await Promise.all([poll(500), poll(200)])).toEqual([500, 200]);
	const nested = await time.run(async () => {
		const running = poll(300);
		await time.sleep(100);
		return [await poll(50), await running, time.now() - VIRTUAL_START_MS];
	});
	expect(nested).toEqual([50, 300, 500 + 300]);
});

test('a timer called off never fires; `every` ticks until cancelled', async () => {
	const time = new VirtualTime();
	const ticks: number[] = [];
	const stop = time.every(40, () => ticks.push(time.now() - VIRTUAL_START_MS));
	const timeout = time.timer(50);
	let timedOut = false;
	void timeout.done.then(() => (timedOut = true));
	timeout.cancel();
	await time.advance(130);
	stop();
	await time.advance(100);
	expect({ ticks, timedOut }).toEqual({ ticks: [40, 80, 120], timedOut: false });
});

test('the same scenario gives the same result every run, random jitter included', async () => {
	const scenario = async () => {
		const time = new VirtualTime();
		const trace: string[] = [];
		await time.run(async () => {
			await Promise.all(
				[0, 1, 2].map(async (worker) => {
					for (let step = 0; step < 3; step++) {
						await time.sleep(Math.floor(Math.random() * 100));
						trace.push(`${worker}@${time.now() - VIRTUAL_START_MS}`);
					}
				}),
			);
		});
		return trace;
	};
	const first = await scenario();
	expect(await scenario()).toEqual(first);
	expect(new Set(first.map((entry) => entry.split('@')[1])).size).toBeGreaterThan(1);
});
