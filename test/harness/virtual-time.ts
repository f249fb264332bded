/* eslint-disable @n8n/community-nodes/no-restricted-imports */
/**
 * Simulated time for tests that run the Polling Trigger in process: n8n's clock, with no wall
 * clock behind it. Time moves only while `run` drives it: whenever no microtask is left (one
 * `setImmediate` turn drains them), it jumps to the next timer and fires it. Timers due at the
 * same moment fire in the order they were set, so a scenario gives the same result every run.
 * Waits that overlap take the longest of them, not their sum: four requests of 1 s sent at once
 * are answered after 1 s.
 */
import { setImmediate } from 'node:timers';

import { createRandom, type Random } from '../simulator/random';

interface Timer {
	at: number;
	order: number;
	fire: () => void;
}

/** A wait that can be called off before it ends (e.g. a request's timeout once it answered). */
export interface VirtualTimer {
	done: Promise<void>;
	cancel(): void;
}

/** 2026-06-15T08:00:00.318Z: a fixed start (not on a whole second, as n8n's clock rarely is). */
export const VIRTUAL_START_MS = Date.UTC(2026, 5, 15, 8, 0, 0, 318);

export class VirtualTime {
	private nowMs: number;

	private timers: Timer[] = [];

	private order = 0;

	/** Functions `run` was given that have not settled yet. */
	private pending = 0;

	private driving = false;

	private readonly random: Random;

	constructor(startMs = VIRTUAL_START_MS, seed: number | string = 1) {
		this.nowMs = startMs;
		this.random = createRandom(`${seed}:time`);
	}

	/** n8n's time (epoch ms). */
	readonly now = (): number => this.nowMs;

	/** Resolves once `ms` of simulated time passed (while `run` drives the time). */
	sleep(ms: number): Promise<void> {
		return this.timer(ms).done;
	}

	timer(ms: number): VirtualTimer {
		let fire = () => {};
		const done = new Promise<void>((resolve) => (fire = resolve));
		const timer = { at: this.nowMs + Math.max(0, ms), order: this.order++, fire };
		this.insert(timer);
		return { done, cancel: () => (this.timers = this.timers.filter((other) => other !== timer)) };
	}

	/** Calls `tick` every `ms` of simulated time until cancelled (as setInterval does). */
	every(ms: number, tick: () => void): () => void {
		let current: Timer | undefined;
		const schedule = () => {
			current = {
				at: this.nowMs + ms,
				order: this.order++,
				fire: () => {
					schedule();
					tick();
				},
			};
			this.insert(current);
		};
		schedule();
		return () => (this.timers = this.timers.filter((timer) => timer !== current));
	}

	/** Lets `ms` of simulated time pass, firing every timer due meanwhile. */
	async advance(ms: number): Promise<void> {
		await this.run(async () => await this.sleep(ms));
	}

	/**
	 * Runs `work` to its end, moving time on whenever nothing else can happen. Called while time
	 * is driven already (e.g. two polls started together), it only waits for `work`.
	 */
	async run<T>(work: () => Promise<T>): Promise<T> {
		const outer = !this.driving;
		this.driving = true;
		// The jitter of retries and the like come from a seeded sequence while time is driven.
		const restoreRandom = outer ? this.seedRandom() : () => {};
		this.pending += 1;
		let started: Promise<T>;
		try {
			started = work();
		} catch (error) {
			started = Promise.reject(error);
		}
		const outcome = started.then(
			(value) => ({ value }),
			(error: unknown) => ({ error }),
		);
		void outcome.then(() => (this.pending -= 1));
		if (outer) {
			try {
				await this.drive();
			} finally {
				this.driving = false;
				restoreRandom();
			}
		}
		const settled = await outcome;
		if ('error' in settled) throw settled.error;
		return settled.value;
	}

	private async drive() {
		for (;;) {
			await new Promise<void>((resolve) => setImmediate(resolve));
			if (this.pending === 0) return;
			const next = this.timers.shift();
			if (!next) {
				throw new Error('Simulated time is stuck: the work waits for something no timer ends');
			}
			this.nowMs = Math.max(this.nowMs, next.at);
			next.fire();
		}
	}

	private seedRandom(): () => void {
		const real = Math.random;
		Math.random = () => this.random.next();
		return () => (Math.random = real);
	}

	private insert(timer: Timer) {
		// Sorted by time, then by order: the few timers pending make a linear insert enough.
		let index = this.timers.length;
		while (index > 0 && this.timers[index - 1].at > timer.at) index -= 1;
		this.timers.splice(index, 0, timer);
	}
}
