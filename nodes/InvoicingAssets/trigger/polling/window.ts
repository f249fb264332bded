import type { IDataObject } from 'n8n-workflow';

import { FIRST_PAGE, MAX_PAGE_SIZE, toServiceTimestamp } from '../../transport/contract';
import { PAGE_CONCURRENCY, type ListPage } from '../../transport/pageReader';
import type { Asset, Invoice } from '../../transport/contract';
import type { RecordKind } from './changes';
import type { PollClock } from './clock';

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

/**
 * Why a window is read: the baseline's two reads ('recent': what is listed at the start, stamped
 * within the listing bound before it; 'issued': the invoices issued from some days before it
 * on), or the two positions' reads.
 */
export type WindowPurpose = 'recent' | 'issued' | 'follow' | 'settle';

/** A window of the list as the static data stores it: its query stays the same until it ends. */
export interface StoredWindow {
	purpose: WindowPurpose;
	/** updatedFrom (epoch ms, a whole second); for the issued baseline, issuedFrom. */
	from: number;
	/** updatedTo (inclusive); undefined: whatever is listed now. */
	to?: number;
	/** The service's time of the window's first page, and of its latest (epoch ms). */
	openedAt: number;
	readAt: number;
	/** How far `openedAt` may be off: 0 from the service's Date header, else the listing bound. */
	uncertainty: number;
	/** The next page to read: upwards, or downwards once `descending`. */
	nextPage: number;
	/** The total the last page reported; null when the service does not count. */
	total: number | null;
	/** An exact read past its first page: pages are read from the last down to the first. */
	descending?: boolean;
	/** The last pages of a descending read left the total as it was: several may be read at once. */
	totalHeld?: boolean;
	/** The total of a descending read's first page. */
	firstPageTotal?: number;
}

/**
 * A window of the list read across polls, page by page: upwards (a follow read, the recent
 * baseline) or exactly (a settle read, the issued baseline). Each page read is stored in it at
 * once, so a poll that ends or fails loses nothing of it.
 */
export class ListWindow implements StoredWindow {
	purpose!: WindowPurpose;
	from!: number;
	to?: number;
	openedAt!: number;
	readAt!: number;
	uncertainty!: number;
	nextPage!: number;
	total!: number | null;
	descending?: boolean;
	totalHeld?: boolean;
	firstPageTotal?: number;

	/** A window as stored now, or by 0.1.0 (which named totalHeld `steady`, firstPageTotal `probed`). */
	constructor(stored: StoredWindow & { steady?: boolean; probed?: number }) {
		const { steady, probed, ...window } = stored;
		Object.assign(this, window);
		if (steady !== undefined) this.totalHeld ??= steady;
		if (probed !== undefined) this.firstPageTotal ??= probed;
	}

	/** Opens a window for reading: its times are those of the service, now. */
	static open(purpose: WindowPurpose, from: number, to: number | undefined, clock: PollClock) {
		const { now, uncertainty } = clock.serviceNow();
		const window = { purpose, from, openedAt: now, readAt: now, uncertainty, nextPage: FIRST_PAGE };
		return new ListWindow({ ...window, ...(to === undefined ? {} : { to }), total: null });
	}

	/**
	 * One round of a read upwards: its first page alone (it tells the service's time and the
	 * total), then up to PAGE_CONCURRENCY pages at once (without a total, one at a time), each
	 * handed to `onPage` in order while `keepReading` allows. Returns how the window ended (its
	 * first page held it whole, or it was read to its end), or undefined when it goes on. A record
	 * it misses because the list moved under it, a settle read finds.
	 */
	async readUpward(
		seam: PollSeam,
		kind: RecordKind,
		clock: PollClock,
		onPage: (page: Page) => void,
		keepReading: () => boolean,
	): Promise<'snapshot' | 'end' | undefined> {
		const started = clock.now();
		try {
			for (let round = 0; round < PAGE_CONCURRENCY; round++) {
				const last =
					this.nextPage === FIRST_PAGE || this.total === null
						? this.nextPage
						: Math.min(this.nextPage + PAGE_CONCURRENCY - 1, lastPageOf(this.total));
				const numbers = Array.from(
					{ length: last - this.nextPage + 1 },
					(_, i) => this.nextPage + i,
				);
				for (const answer of await this.readRound(seam, kind, numbers, clock)) {
					if (answer.status === 'rejected') throw answer.reason;
					const page = answer.value;
					this.arrived(page, clock);
					onPage(page);
					this.total = page.totalItems ?? null;
					this.nextPage = page.page + 1;
					if (page.endOfList) return page.page === FIRST_PAGE ? 'snapshot' : 'end';
					if (!keepReading()) return undefined;
				}
				if (numbers.length > 1 || this.nextPage - 1 === FIRST_PAGE) return undefined;
			}
			return undefined;
		} finally {
			clock.measured(clock.now() - started);
		}
	}

	/**
	 * One step of an exact read. Its first page tells the total (without one, pages are read
	 * upwards to the short one); then pages are read from the last down to the first, so a record
	 * that leaves the window moves only records onto pages still to read
	 * ([invariant 2](docs/choosing-a-trigger.md#how-the-polling-trigger-loses-nothing-and-repeats-nothing)).
	 * `narrowedEnd` may narrow the window once its first page answered: it is then read again from
	 * its first page. Returns whether the window was read to its end.
	 */
	async readExactly(
		seam: PollSeam,
		kind: RecordKind,
		clock: PollClock,
		onPage: (page: Page) => void,
		narrowedEnd: (window: ListWindow) => number | undefined = () => undefined,
	): Promise<boolean> {
		const started = clock.now();
		// The first page comes last, alone: it need not be read again when nothing moved.
		const count =
			this.descending && this.totalHeld
				? Math.max(1, Math.min(PAGE_CONCURRENCY, this.nextPage - 1))
				: 1;
		const numbers = Array.from({ length: count }, (_, index) => this.nextPage - index);
		const answers = await this.readRound(seam, kind, numbers, clock);
		const pages = answers.flatMap((answer) =>
			answer.status === 'fulfilled' ? [answer.value] : [],
		);
		clock.measured(clock.now() - started);
		for (const page of pages) {
			this.arrived(page, clock);
			onPage(page);
		}
		const failed = answers.find((answer) => answer.status === 'rejected');
		if (failed) {
			this.totalHeld = false;
			throw failed.reason;
		}
		const [page] = pages;
		if (!this.descending) {
			if (page.endOfList) {
				if (this.nextPage === FIRST_PAGE) return true;
				this.descending = true;
				this.nextPage -= 1;
				return this.nextPage < FIRST_PAGE;
			}
			this.total = page.totalItems ?? null;
			const end = this.nextPage === FIRST_PAGE ? narrowedEnd(this) : undefined;
			if (end !== undefined && this.to !== undefined && end < this.to) {
				this.to = end;
				return end < this.from;
			}
			if (this.total === null) {
				this.nextPage += 1;
			} else {
				this.descending = true;
				this.totalHeld = true;
				this.firstPageTotal = this.total;
				this.nextPage = lastPageOf(this.total);
			}
			return false;
		}
		const totals = pages.map((answered) => answered.totalItems ?? null);
		const known = totals.filter((total): total is number => total !== null);
		const unchanged = this.total !== null && totals.every((total) => total === this.total);
		// A total that rose (a replica behind, a record stamped into the past) may have pushed records
		// onto pages read already: those are read again, and the first page at the end.
		const rise = known.length > 0 ? Math.max(...known) - (this.total ?? Infinity) : 0;
		if (rise > 0) {
			this.nextPage += Math.ceil(rise / MAX_PAGE_SIZE);
			this.firstPageTotal = undefined;
		} else if (count === 1 || unchanged) this.nextPage -= count;
		this.totalHeld = unchanged;
		if (known.length > 0) {
			this.total = rise > 0 ? Math.max(...known) : Math.min(...known);
			this.nextPage = Math.min(this.nextPage, lastPageOf(this.total));
		}
		// Nothing left the window since its first page was read: that page is still as it was read.
		const firstPageHolds = this.total !== null && this.total === this.firstPageTotal;
		return this.nextPage < FIRST_PAGE || (this.nextPage === FIRST_PAGE && firstPageHolds);
	}

	toJSON(): StoredWindow {
		return { ...this };
	}

	/** Pages of the window's query, asked for at once. */
	private async readRound(seam: PollSeam, kind: RecordKind, numbers: number[], clock: PollClock) {
		const [fromKey, toKey] =
			this.purpose === 'issued' ? ['issuedFrom', 'issuedTo'] : ['updatedFrom', 'updatedTo'];
		const query = {
			[fromKey]: timestampOf(this.from),
			...(this.to === undefined ? {} : { [toKey]: timestampOf(this.to) }),
		};
		const { deadline } = clock;
		return await Promise.allSettled(
			numbers.map(
				async (page) =>
					await seam.readPage({ kind, query, page, pageSize: MAX_PAGE_SIZE, deadline }),
			),
		);
	}

	/** The service's time of a page (the clock learns it): the first page opens the window. */
	private arrived(page: Page, clock: PollClock) {
		clock.answered(page.answeredAt);
		const { now, uncertainty } = clock.serviceNow();
		this.readAt = page.answeredAt ?? now;
		if (this.nextPage === FIRST_PAGE && !this.descending) {
			this.openedAt = this.readAt;
			this.uncertainty = uncertainty;
		}
	}
}

function lastPageOf(total: number): number {
	return Math.max(FIRST_PAGE, FIRST_PAGE - 1 + Math.ceil(total / MAX_PAGE_SIZE));
}

export function timestampOf(ms: number): string {
	return toServiceTimestamp(new Date(ms));
}
