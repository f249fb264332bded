import { toServiceTimestamp } from './contract';

/** Simulated time: real time plus an offset that only ever grows. */
export class SimulatorClock {
	private offset: number;

	constructor(offsetMs = 0) {
		this.offset = offsetMs;
	}

	now(): Date {
		return new Date(Date.now() + this.offset);
	}

	nowMs(): number {
		return Date.now() + this.offset;
	}

	/** `YYYY-MM-DDTHH:MM:SSZ` of the simulated now. */
	timestamp(): string {
		return toServiceTimestamp(this.now());
	}

	get offsetMs(): number {
		return this.offset;
	}

	advance(ms: number): Date {
		if (!Number.isFinite(ms) || ms < 0) {
			throw new Error(`The clock only moves forward; got ${ms} ms.`);
		}
		this.offset += ms;
		return this.now();
	}
}
