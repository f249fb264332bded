import type { IDataObject } from 'n8n-workflow';

import { FIRST_PAGE, MAX_PAGE_SIZE, toServiceTimestamp } from '../../transport/contract';
import type { Asset, Invoice } from '../../transport/contract';
import { PAGE_CONCURRENCY, type ListPage } from '../../transport/pageReader';
import type { RecordKind } from './changes';
import type { PollClock } from './clock';

export type PolledPage = ListPage<Invoice | Asset>;

export interface PageRequest {
	kind: RecordKind;
	query: IDataObject;
	page: number;
	pageSize: number;
	/** n8n's time by which the poll should end: no retry waits past it. */
	deadline: number;
}

/** All a poll takes from outside: n8n's clock and one page of a list at a time (tests give their own). */
export interface PollSeam {
	now(): number;
	requestPage(request: PageRequest): Promise<PolledPage>;
}

/** A poll's reads of one kind's list, and what takes each page read. */
export interface KindRead {
	seam: PollSeam;
	kind: RecordKind;
	clock: PollClock;
	accept(window: ListWindow, page: PolledPage): void;
}

/** The baseline's two reads ('recent' listed at the start, 'issued' invoices), or the two positions'. */
export type WindowPurpose = 'recent' | 'issued' | 'follow' | 'settle';

/** A window of the list, read page by page across polls; its query stays the same until it ends. */
export interface ListWindow {
	purpose: WindowPurpose;
	/** updatedFrom (epoch ms, a whole second); for the issued baseline, issuedFrom. */
	from: number;
	/** updatedTo (inclusive); undefined: whatever is listed now. */
	to?: number;
	/** The service's time of its first page, and of its latest. */
	openedAt: number;
	readAt: number;
	/** How far `openedAt` may be off: 0 from the service's Date header, else the listing bound. */
	uncertainty: number;
	/** The next page to read: upwards, or downwards once `descending`. */
	nextPage: number;
	/** The total the last page reported; null when the service does not count. */
	total: number | null;
	descending?: boolean;
	/** The last pages of a descending read left the total as it was: several may be read at once. */
	totalHeld?: boolean;
	/** The total of a descending read's first page. */
	firstPageTotal?: number;
}

/** A settle window's end once its first page answered (KindMemory.narrowedSettleEnd). */
type NarrowedEnd = (window: ListWindow) => number | undefined;

/** A window opened at the service's time now. */
export function openWindow(purpose: WindowPurpose, clock: PollClock, from: number, to?: number) {
	const { now, uncertainty } = clock.serviceNow();
	const read = { openedAt: now, readAt: now, uncertainty, nextPage: FIRST_PAGE };
	return { purpose, from, ...(to === undefined ? {} : { to }), ...read, total: null } as ListWindow;
}

/** A round of a read upwards (its first page alone: the service's time and the total): 'snapshot', 'end' or going on. */
export async function readUpward(window: ListWindow, read: KindRead, keepReading: () => boolean) {
	const { nextPage, total } = window;
	const last =
		nextPage === FIRST_PAGE || total === null
			? nextPage
			: Math.min(nextPage + PAGE_CONCURRENCY - 1, lastPageOf(total));
	const numbers = Array.from({ length: last - nextPage + 1 }, (_, index) => nextPage + index);
	for (const answer of await readRound(window, read, numbers)) {
		if (answer.status === 'rejected') throw answer.reason;
		const page = answer.value;
		arrived(window, page, read);
		window.total = page.totalItems ?? null;
		window.nextPage = page.page + 1;
		if (page.endOfList) return page.page === FIRST_PAGE ? 'snapshot' : 'end';
		if (!keepReading()) return undefined;
	}
	return undefined;
}

/** A step of an exact read: the first page, then from the last page down (invariant 2); whether it ended. */
export async function readExactly(window: ListWindow, read: KindRead, narrowedEnd: NarrowedEnd) {
	// The first page comes last, alone: it need not be read again when nothing moved.
	const count =
		window.descending && window.totalHeld ? Math.min(PAGE_CONCURRENCY, window.nextPage - 1) : 1;
	const numbers = Array.from({ length: Math.max(1, count) }, (_, index) => window.nextPage - index);
	const answers = await readRound(window, read, numbers);
	const pages = answers.flatMap((answer) => (answer.status === 'fulfilled' ? [answer.value] : []));
	for (const page of pages) arrived(window, page, read);
	const failed = answers.find((answer) => answer.status === 'rejected');
	if (failed) {
		window.totalHeld = false;
		throw failed.reason;
	}
	if (!window.descending) return firstPagesRead(window, pages[0], narrowedEnd);
	const totals = pages.map((answered) => answered.totalItems ?? null);
	const known = totals.filter((total): total is number => total !== null);
	const unchanged = window.total !== null && totals.every((total) => total === window.total);
	// A total that rose (a replica behind, a record stamped into the past) may have pushed records
	// onto pages read already: those are read again, and the first page at the end.
	const rise = known.length > 0 ? Math.max(...known) - (window.total ?? Infinity) : 0;
	if (rise > 0) {
		window.nextPage += Math.ceil(rise / MAX_PAGE_SIZE);
		window.firstPageTotal = undefined;
	} else if (numbers.length === 1 || unchanged) window.nextPage -= numbers.length;
	window.totalHeld = unchanged;
	if (known.length > 0) {
		window.total = rise > 0 ? Math.max(...known) : Math.min(...known);
		window.nextPage = Math.min(window.nextPage, lastPageOf(window.total));
	}
	// Nothing left the window since its first page was read: that page is still as it was read.
	const firstPageHolds = window.total !== null && window.total === window.firstPageTotal;
	return window.nextPage < FIRST_PAGE || (window.nextPage === FIRST_PAGE && firstPageHolds);
}

/** An exact read upwards, before it knows its total: to the short page, then down from it. */
function firstPagesRead(window: ListWindow, page: PolledPage, narrowedEnd: NarrowedEnd): boolean {
	if (page.endOfList) {
		if (window.nextPage === FIRST_PAGE) return true;
		window.descending = true;
		window.nextPage -= 1;
		return window.nextPage < FIRST_PAGE;
	}
	window.total = page.totalItems ?? null;
	const end = window.nextPage === FIRST_PAGE ? narrowedEnd(window) : undefined;
	if (end !== undefined && window.to !== undefined && end < window.to) {
		// Narrowed: read again from its first page.
		window.to = end;
		return end < window.from;
	}
	if (window.total === null) {
		window.nextPage += 1;
	} else {
		window.descending = true;
		window.totalHeld = true;
		window.firstPageTotal = window.total;
		window.nextPage = lastPageOf(window.total);
	}
	return false;
}

/** Pages of the window's query, asked for at once; the round's time paces the poll's plan. */
async function readRound(window: ListWindow, { seam, kind, clock }: KindRead, numbers: number[]) {
	const [fromKey, toKey] =
		window.purpose === 'issued' ? ['issuedFrom', 'issuedTo'] : ['updatedFrom', 'updatedTo'];
	const query = {
		[fromKey]: timestampOf(window.from),
		...(window.to === undefined ? {} : { [toKey]: timestampOf(window.to) }),
	};
	const request = { kind, query, pageSize: MAX_PAGE_SIZE, deadline: clock.deadline };
	const started = clock.now();
	const answers = await Promise.allSettled(
		numbers.map(async (page) => await seam.requestPage({ ...request, page })),
	);
	clock.measured(clock.now() - started);
	return answers;
}

/** A page read: the clock learns the service's time, the first page opens the window, the page is taken. */
function arrived(window: ListWindow, page: PolledPage, { clock, accept }: KindRead) {
	clock.answered(page.answeredAt);
	const { now, uncertainty } = clock.serviceNow();
	window.readAt = page.answeredAt ?? now;
	if (window.nextPage === FIRST_PAGE && !window.descending) {
		window.openedAt = window.readAt;
		window.uncertainty = uncertainty;
	}
	accept(window, page);
}

function lastPageOf(total: number): number {
	return Math.max(FIRST_PAGE, FIRST_PAGE - 1 + Math.ceil(total / MAX_PAGE_SIZE));
}

export function timestampOf(ms: number): string {
	return toServiceTimestamp(new Date(ms));
}
