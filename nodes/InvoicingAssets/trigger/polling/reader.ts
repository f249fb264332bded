import type { IDataObject } from 'n8n-workflow';

import {
	FIRST_PAGE,
	MAX_PAGE_SIZE,
	paths,
	type Asset,
	type Invoice,
} from '../../transport/contract';
import {
	PAGE_CONCURRENCY,
	readPages,
	type ListClient,
	type ListPage,
} from '../../transport/pageReader';
import type { RecordKind } from './changes';
import { LISTED_WITHIN_MS, timestampOf, type OpenWindow } from './memory';

export type Page = ListPage<Invoice | Asset>;

/** One page of a record kind's list, as a poll asks for it. */
export interface PageRequest {
	kind: RecordKind;
	/** The window's filters (updatedFrom, updatedTo, issuedFrom); none for any record. */
	query: IDataObject;
	page: number;
	pageSize: number;
	/** n8n's time (epoch ms) by which the poll should be done: no retry waits past it. */
	deadline: number;
}

/**
 * All a poll takes from outside: n8n's clock and one page of a list at a time. n8n gives the
 * real ones (seamOf); tests give a simulated clock and an in-memory service.
 */
export interface PollSeam {
	now(): number;
	readPage(request: PageRequest): Promise<Page>;
}

/** The seam of a poll in n8n: its clock, and the Data Service's lists through the transport. */
export function seamOf(client: ListClient, now = () => Date.now()): PollSeam {
	return {
		now,
		readPage: async ({ kind, query, page, pageSize, deadline }) => {
			const read = {
				path: listPathOf(kind),
				qs: query,
				limit: pageSize,
				startPage: page,
				pagesInFlight: 1,
				deadline,
			};
			const first = await readPages<Invoice | Asset>(client, read).next();
			// A limit of at least one record always gives a page.
			return first.value as Page;
		},
	};
}

/** The time a poll may still spend, and what it learnt of the service's clock and pace. */
export class PollClock {
	/** How long a round of PAGE_CONCURRENCY requests took lately; undefined before an answer. */
	roundMs: number | undefined;

	constructor(
		readonly now: () => number,
		public deadline: number,
		/** The service's time less n8n's (ms), from the latest answer with a Date header. */
		public offset?: number,
	) {}

	/** The service's time now, and how far it may be off (the listing bound without a Date header). */
	serviceNow(): { now: number; uncertainty: number } {
		return this.offset === undefined
			? { now: this.now(), uncertainty: LISTED_WITHIN_MS }
			: { now: this.now() + this.offset, uncertainty: 0 };
	}

	/** How many more rounds of page requests fit in the poll. */
	roundsLeft(): number {
		const left = this.deadline - this.now();
		// Before anything was measured in this poll, one round: it tells how long rounds take.
		if (this.roundMs === undefined) return left > 0 ? 1 : 0;
		return Math.floor(left / Math.max(1, this.roundMs));
	}

	/** A round took `ms`; the service answered at `answeredAt`. */
	measured(ms: number, answeredAt?: number) {
		// The slower of the last round and the average: a poll plans for pages slower than the last.
		this.roundMs = this.roundMs === undefined ? ms : Math.max(ms, (this.roundMs + ms) / 2);
		if (answeredAt !== undefined) this.offset = answeredAt - this.now();
	}
}

/** Opens a window for reading: its times are those of the service, now. */
export function openWindow(
	purpose: OpenWindow['purpose'],
	from: number,
	to: number | undefined,
	clock: PollClock,
): OpenWindow {
	const { now, uncertainty } = clock.serviceNow();
	return {
		purpose,
		from,
		...(to === undefined ? {} : { to }),
		openedAt: now,
		readAt: now,
		uncertainty,
		nextPage: FIRST_PAGE,
		total: null,
	};
}

/**
 * One round of a read upwards (a follow window, the recent baseline): up to PAGE_CONCURRENCY
 * pages from where the window stopped, each handed to `take` and stored in the window as it
 * comes, while `goOn` allows. Returns how the window ended (its first page held it whole, or it
 * was read to its end), or undefined when it goes on. Such a
 * read tolerates a list that moves under it: a record it misses (records before it left the
 * list between two pages), a settle window reads.
 */
export async function readOn(
	seam: PollSeam,
	kind: RecordKind,
	window: OpenWindow,
	clock: PollClock,
	take: (page: Page) => void,
	goOn: () => boolean,
): Promise<'snapshot' | 'end' | undefined> {
	const started = clock.now();
	try {
		// A window's first page alone: it tells the service's time and the total. Without a total,
		// one page at a time.
		for (let round = 0; round < PAGE_CONCURRENCY; round++) {
			const last =
				window.nextPage === FIRST_PAGE || window.total === null
					? window.nextPage
					: Math.min(window.nextPage + PAGE_CONCURRENCY - 1, lastPageOf(window.total));
			const numbers = Array.from(
				{ length: last - window.nextPage + 1 },
				(_, i) => window.nextPage + i,
			);
			const answers = await readRound(seam, kind, window, numbers, clock.deadline);
			for (const answer of answers) {
				if (answer.status === 'rejected') throw answer.reason;
				const page = answer.value;
				arrived(window, page, clock);
				take(page);
				window.total = page.totalItems ?? null;
				window.nextPage = page.page + 1;
				if (page.endOfList) return page.page === FIRST_PAGE ? 'snapshot' : 'end';
				if (!goOn()) return undefined;
			}
			if (numbers.length > 1 || window.nextPage - 1 === FIRST_PAGE) return undefined;
		}
		return undefined;
	} finally {
		clock.measured(clock.now() - started);
	}
}

/** Pages of a window's query, asked for at once. */
async function readRound(
	seam: PollSeam,
	kind: RecordKind,
	window: OpenWindow,
	numbers: number[],
	deadline: number,
): Promise<Array<PromiseSettledResult<Page>>> {
	const query = queryOf(window);
	return await Promise.allSettled(
		numbers.map(
			async (page) => await seam.readPage({ kind, query, page, pageSize: MAX_PAGE_SIZE, deadline }),
		),
	);
}

/**
 * One step of an exact read (a settle window, the issued baseline), stored in the window as it
 * goes, so that a poll that ends or fails after it loses nothing of it. Its first page tells the
 * total (without one, pages are read upwards to the short one). Then the pages are read from the
 * last down to the first: a record that leaves the window (changed again) moves only the records
 * after it, up, and those are on pages still to read, so every record that stays is read however
 * many leave, and however many polls the read takes. Several pages are asked for at once only
 * while the total stays as it was (nothing moved between them); after a change, one at a time.
 * The first page is read again at the end only when the total fell since it was read.
 * `endAllowed` may narrow the window once its first page showed the total and the service's time;
 * it is then read again from its first page. Returns whether the window was read to its end.
 */
export async function readExactly(
	seam: PollSeam,
	kind: RecordKind,
	window: OpenWindow,
	clock: PollClock,
	take: (page: Page) => void,
	endAllowed: (window: OpenWindow) => number | undefined = () => undefined,
): Promise<boolean> {
	const started = clock.now();
	// The first page comes last, alone: it need not be read again when nothing moved.
	const count =
		window.descending && window.steady
			? Math.max(1, Math.min(PAGE_CONCURRENCY, window.nextPage - 1))
			: 1;
	const numbers = Array.from({ length: count }, (_, index) => window.nextPage - index);
	const answers = await readRound(seam, kind, window, numbers, clock.deadline);
	const pages = answers.flatMap((answer) => (answer.status === 'fulfilled' ? [answer.value] : []));
	clock.measured(clock.now() - started);
	for (const page of pages) {
		arrived(window, page, clock);
		take(page);
	}
	const failed = answers.find((answer) => answer.status === 'rejected');
	if (failed) {
		window.steady = false;
		throw failed.reason;
	}
	const [page] = pages;
	if (!window.descending) {
		if (!page || page.endOfList) {
			if (window.nextPage === FIRST_PAGE) return true;
			window.descending = true;
			window.nextPage -= 1;
			return window.nextPage < FIRST_PAGE;
		}
		window.total = page.totalItems ?? null;
		const end = window.nextPage === FIRST_PAGE ? endAllowed(window) : undefined;
		if (end !== undefined && window.to !== undefined && end < window.to) {
			window.to = end;
			return end < window.from;
		}
		if (window.total === null) {
			window.nextPage += 1;
		} else {
			window.descending = true;
			window.steady = true;
			window.probed = window.total;
			window.nextPage = lastPageOf(window.total);
		}
		return false;
	}
	const totals = pages.map((answered) => answered.totalItems ?? null);
	const known = totals.filter((total): total is number => total !== null);
	const unchanged = window.total !== null && totals.every((total) => total === window.total);
	// A total that rose (a replica behind, a record stamped into the past) may have pushed records
	// onto pages read already: those are read again, and the first page at the end.
	const rise = known.length > 0 ? Math.max(...known) - (window.total ?? Infinity) : 0;
	if (rise > 0) {
		window.nextPage += Math.ceil(rise / MAX_PAGE_SIZE);
		window.probed = undefined;
	} else if (count === 1 || unchanged) window.nextPage -= count;
	window.steady = unchanged;
	if (known.length > 0) {
		window.total = rise > 0 ? Math.max(...known) : Math.min(...known);
		window.nextPage = Math.min(window.nextPage, lastPageOf(window.total));
	}
	// Nothing left the window since its first page was read: that page is still as it was read.
	const firstPageHolds = window.total !== null && window.total === window.probed;
	return window.nextPage < FIRST_PAGE || (window.nextPage === FIRST_PAGE && firstPageHolds);
}

/** The service's time of a window's page (the clock learns it): its first page opens the window. */
function arrived(window: OpenWindow, page: Page, clock: PollClock) {
	if (page.answeredAt !== undefined) clock.offset = page.answeredAt - clock.now();
	const { now, uncertainty } = clock.serviceNow();
	window.readAt = page.answeredAt ?? now;
	if (window.nextPage === FIRST_PAGE && !window.descending) {
		window.openedAt = window.readAt;
		window.uncertainty = uncertainty;
	}
}

function lastPageOf(total: number): number {
	return Math.max(FIRST_PAGE, FIRST_PAGE - 1 + Math.ceil(total / MAX_PAGE_SIZE));
}

export function listPathOf(kind: RecordKind): string {
	return kind === 'invoice' ? paths.invoices : paths.assets;
}

export function queryOf({ purpose, from, to }: OpenWindow): IDataObject {
	const [fromKey, toKey] =
		purpose === 'issued' ? ['issuedFrom', 'issuedTo'] : ['updatedFrom', 'updatedTo'];
	return {
		[fromKey]: timestampOf(from),
		...(to === undefined ? {} : { [toKey]: timestampOf(to) }),
	};
}
