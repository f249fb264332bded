import { CHANGE_LISTED_WITHIN_MS, FIRST_PAGE } from '../../transport/contract';
import { floorSecond, SECOND_MS, type RecordKind } from './changes';
import type { PollSeam } from './window';

/** The time a poll may still spend, and what it learnt of the service's clock and pace. */
export class PollClock {
	/** How long a round of page requests took lately; undefined before an answer. */
	roundMs: number | undefined;

	constructor(
		readonly now: () => number,
		public deadline: number,
		/** The service's time less n8n's, from the latest answer with a Date header. */
		public offset?: number,
	) {}

	/** The service's time now, and how far it may be off (the listing bound without a Date header). */
	serviceNow(): { now: number; uncertainty: number } {
		return this.offset === undefined
			? { now: this.now(), uncertainty: CHANGE_LISTED_WITHIN_MS }
			: { now: this.now() + this.offset, uncertainty: 0 };
	}

	/** Asks for one record to learn the service's time, unless an answer of this poll told it. */
	async learnServiceTime(seam: PollSeam, kind: RecordKind) {
		if (this.roundMs !== undefined) return;
		const started = this.now();
		const request = { kind, query: {}, page: FIRST_PAGE, pageSize: 1, deadline: this.deadline };
		const page = await seam.requestPage(request);
		this.measured(this.now() - started);
		this.answered(page.answeredAt);
	}

	/** An answer's Date header tells the service's time: every later plan goes by it. */
	answered(answeredAt: number | undefined) {
		if (answeredAt !== undefined) this.offset = answeredAt - this.now();
	}

	/** Whether another round of page requests fits before the deadline, at least half of it. */
	roundFits(): boolean {
		// The poll's first round is read even without time left: every poll moves on (invariant 1).
		if (this.roundMs === undefined) return true;
		return (this.deadline - this.now()) / Math.max(1, this.roundMs) >= 0.5;
	}

	/** A round took `ms`: rounds are planned by the slower of the last one and the average. */
	measured(ms: number) {
		this.roundMs = this.roundMs === undefined ? ms : Math.max(ms, (this.roundMs + ms) / 2);
	}
}

/** The second before which every change is listed, by the service's time `at` ± `uncertainty` (docs/service-contract.md). */
export function settledBy(at: number, uncertainty: number): number {
	return floorSecond(at - CHANGE_LISTED_WITHIN_MS - uncertainty);
}

/** The last second a settle window may end at: updatedTo is inclusive, and a stamp with fractions of its second lies after it. */
export function lastSettleSecond(at: number, uncertainty: number): number {
	return settledBy(at, uncertainty) - SECOND_MS;
}
