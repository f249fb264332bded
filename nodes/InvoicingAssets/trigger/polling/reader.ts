import type { IDataObject } from 'n8n-workflow';

import type { ServiceClient } from '../../transport';
import {
	FIRST_PAGE,
	MAX_PAGE_SIZE,
	paths,
	type Asset,
	type Invoice,
} from '../../transport/contract';
import {
	ListReadError,
	PAGE_CONCURRENCY,
	PagesDoNotAddUpError,
	readPages,
	type ListPage,
} from '../../transport/pageReader';
import type { PolledRecord, RecordKind } from './changes';
import { LISTED_WITHIN_MS, timestampOf, type OpenWindow } from './memory';

/** Times a window may start again within one poll because its pages moved, before the poll fails. */
export const READ_ATTEMPTS = 3;

/** The time a poll may still spend, and what it learnt of the service's clock and pace. */
export class PollClock {
	/** How long one round of page requests (PAGE_CONCURRENCY at once) took, at the slowest lately. */
	private roundMs: number | undefined;

	constructor(
		public deadline: number,
		/** The service's time less n8n's (ms), from the latest answer with a Date header. */
		public offset?: number,
	) {}

	/** The service's time now, and how far it may be off (the listing bound without a Date header). */
	serviceNow(): { now: number; uncertainty: number } {
		return this.offset === undefined
			? { now: Date.now(), uncertainty: LISTED_WITHIN_MS }
			: { now: Date.now() + this.offset, uncertainty: 0 };
	}

	/** How many more rounds of page requests fit in the poll. */
	roundsLeft(): number {
		const left = this.deadline - Date.now();
		// Before anything was measured in this poll, one round: it tells how long rounds take.
		if (this.roundMs === undefined) return left > 0 ? 1 : 0;
		return Math.floor(left / Math.max(1, this.roundMs));
	}

	/** A round (or a first page) took `ms`; the service answered at `answeredAt`. */
	measured(ms: number, answeredAt: number | undefined) {
		// The slower of the last round and the average: a poll plans for pages slower than the last.
		this.roundMs = this.roundMs === undefined ? ms : Math.max(ms, (this.roundMs + ms) / 2);
		if (answeredAt !== undefined) this.offset = answeredAt - Date.now();
	}
}

/**
 * Reads a window on, page by page, from the page it stopped at, while the poll's time lasts;
 * `accept` takes each page's records with the service's time of the page, and the read stops
 * between pages when `goOn` says so. Returns whether the window was read to its end, and whether
 * that was one first page alone (a snapshot).
 *
 * Paging relies on the contract's stable order for an unchanged query: a window keeps its query
 * until it ends, across polls. A settle window must be read exactly: when its total falls
 * (records changed again leave it) the read goes back as many pages as records left, since
 * those behind moved forward; any other change of a settle or baseline window's total starts it
 * again. A follow window tolerates a list that moves: what it misses, a settle window reads.
 */
export async function readWindow(
	client: ServiceClient,
	kind: RecordKind,
	window: OpenWindow,
	clock: PollClock,
	accept: (records: PolledRecord[], serviceTime: number) => void,
	goOn: (window: OpenWindow) => boolean,
): Promise<{ complete: boolean; snapshot: boolean }> {
	const exact = window.purpose === 'settle' || window.purpose === 'baseline';
	const take = (page: ListPage<Invoice | Asset>) => {
		window.readAt = page.answeredAt ?? clock.serviceNow().now;
		accept(
			page.records.map((record) => ({ kind, record }) as PolledRecord),
			window.readAt,
		);
	};
	const read = { path: listPathOf(kind), qs: queryOf(window), deadline: clock.deadline };
	let restarts = 0;
	if (window.nextPage === FIRST_PAGE) {
		const started = Date.now();
		const page = await firstPage(client, kind, read.qs, MAX_PAGE_SIZE, clock.deadline);
		clock.measured(Date.now() - started, page?.answeredAt);
		const { now, uncertainty } = clock.serviceNow();
		window.openedAt = page?.answeredAt ?? now;
		window.readAt = window.openedAt;
		window.uncertainty = uncertainty;
		if (page) take(page);
		window.total = page?.totalItems ?? null;
		if (!page || page.endOfList) return { complete: true, snapshot: true };
		window.nextPage = FIRST_PAGE + 1;
		if (!goOn(window)) return { complete: false, snapshot: false };
	}
	for (;;) {
		const rounds = clock.roundsLeft();
		if (rounds < 1 || !goOn(window)) return { complete: false, snapshot: false };
		const started = Date.now();
		let pagesRead = 0;
		let answeredAt: number | undefined;
		const readPageRounds = async (): Promise<'complete' | 'paused' | 'moved' | 'more'> => {
			for await (const page of readPages<Invoice | Asset>(client, {
				...read,
				startPage: window.nextPage,
				totalItems: window.total ?? undefined,
				limit: rounds * PAGE_CONCURRENCY * MAX_PAGE_SIZE,
			})) {
				pagesRead += 1;
				answeredAt = page.answeredAt ?? answeredAt;
				take(page);
				const total = page.totalItems ?? null;
				// A record given again: it moved further down the list, and those after it moved up.
				if (exact && page.repeated > 0) {
					window.nextPage = FIRST_PAGE;
					return 'moved';
				}
				if (exact && window.total !== null && total !== null && total !== window.total) {
					const fewer = window.total - total;
					window.nextPage =
						fewer > 0 ? Math.max(FIRST_PAGE, page.page - Math.ceil(fewer / MAX_PAGE_SIZE)) : 1;
					window.total = total;
					return 'moved';
				}
				window.total = total;
				window.nextPage = page.page + 1;
				if (page.endOfList) return 'complete';
				if (!goOn(window)) return 'paused';
			}
			return 'more';
		};
		const pagesMoved = await readPageRounds().catch(async (error: unknown) =>
			error instanceof ListReadError && restarts < READ_ATTEMPTS
				? error
				: await Promise.reject(error),
		);
		if (pagesMoved === 'complete') return { complete: true, snapshot: false };
		if (pagesMoved === 'paused') return { complete: false, snapshot: false };
		// The list moved under the read: a short page before its total (records left it: the page
		// before is read again), or a page of records given already (records came into it: a
		// follow window reads on after that page, another starts again).
		if (pagesMoved instanceof ListReadError) {
			const back = pagesMoved instanceof PagesDoNotAddUpError;
			window.nextPage =
				back || exact ? Math.max(FIRST_PAGE, back ? window.nextPage - 1 : 1) : window.nextPage + 1;
			restarts += 1;
		}
		clock.measured(
			(Date.now() - started) / Math.max(1, Math.ceil(pagesRead / PAGE_CONCURRENCY)),
			answeredAt,
		);
	}
}

export function listPathOf(kind: RecordKind): string {
	return kind === 'invoice' ? paths.invoices : paths.assets;
}

/** The first page of a list query, alone (`limit` records at most); undefined for no page. */
export async function firstPage(
	client: ServiceClient,
	kind: RecordKind,
	qs: IDataObject,
	limit: number,
	deadline?: number,
): Promise<ListPage<Invoice | Asset> | undefined> {
	const first = await readPages<Invoice | Asset>(client, {
		path: listPathOf(kind),
		qs,
		limit,
		pagesInFlight: 1,
		deadline,
	}).next();
	return first.done ? undefined : first.value;
}

function queryOf(window: OpenWindow): IDataObject {
	if (window.purpose === 'issued-baseline') {
		return { issuedFrom: timestampOf(window.from), issuedTo: timestampOf(window.to ?? 0) };
	}
	const to = window.to === undefined ? {} : { updatedTo: timestampOf(window.to) };
	return { updatedFrom: timestampOf(window.from), ...to };
}
