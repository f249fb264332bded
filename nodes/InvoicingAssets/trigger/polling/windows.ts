import type { IDataObject, IPollFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import type { ServiceClient } from '../../transport';
import {
	FIRST_PAGE,
	MAX_PAGE_SIZE,
	paths,
	toServiceTimestamp,
	type Asset,
	type AssetFilters,
	type Invoice,
	type InvoiceFilters,
} from '../../transport/contract';
import { PAGE_CONCURRENCY, PagesDoNotAddUpError, readPages } from '../../transport/pageReader';
import {
	floorSecond,
	OVERLAP_MS,
	recordId,
	UNKNOWN_CLOCK_TOLERANCE_MS,
	type PolledRecord,
	type ReadWindow,
	type RecordKind,
} from './changes';

/** Windows whose pages did not add up, one after the other, before the poll fails. */
export const READ_ATTEMPTS = 3;

/** A window is planned to take at most this share of the time left, for pages slower than the last. */
const PLANNING_SHARE = 0.8;

/** What one poll may still spend: until `deadline` (epoch ms), and at most `records` records held. */
export interface PollBudget {
	deadline: number;
	records: number;
}

/** The first page of a window. */
interface WindowPage {
	records: PolledRecord[];
	total?: number;
	/** The page holds the whole window (a short page, or one that reaches the total). */
	whole: boolean;
	/** The service's time of the answer (its Date header), epoch ms. */
	serviceNow?: number;
}

type WindowRead =
	| { outcome: 'complete'; window: ReadWindow }
	| { outcome: 'narrow'; to: number }
	| { outcome: 'not added up'; end: number }
	| { outcome: 'out of budget' };

const SECOND_MS = 1000;

/**
 * Reads the changed records of one kind window by window, within the poll's budget. A window is
 * a span of `updatedAt` (from the settled position up to a time, or up to now); it is read
 * completely or not at all, since no list order is assumed: a window too large for the time or
 * memory left is narrowed with `updatedTo`, never cut at a page.
 */
export class WindowReader {
	/** How long the latest first page took (ms); pages are planned by it. */
	private pageMs = 0;

	/** The service's time of the latest first page (epoch ms). */
	private serviceNow: number | undefined;

	constructor(
		private readonly context: IPollFunctions,
		private readonly client: ServiceClient,
		private readonly kind: RecordKind,
		private readonly budget: PollBudget,
	) {}

	/**
	 * The baseline's moment (the service's time) and, when one page held them, the records
	 * changed from it on: one request reading the last OVERLAP_MS by n8n's clock, which holds
	 * them unless the service's clock is further behind n8n's or the list fuller than a page.
	 */
	async baseline(): Promise<{ at: number; records?: PolledRecord[] }> {
		const from = floorSecond(Date.now() - OVERLAP_MS);
		const first = await this.firstPage(from, undefined, MAX_PAGE_SIZE, undefined);
		if (first === 'not added up') return { at: (await this.serviceTime()).now };
		const clock = clockOf(first);
		const at = clock.now - (clock.tolerance - OVERLAP_MS);
		return first.whole && from <= at ? { at, records: first.records } : { at };
	}

	/** The service's time now, from a one-record list request. */
	async serviceTime(): Promise<{ now: number; tolerance: number }> {
		const first = await this.firstPage(undefined, undefined, 1, this.budget.deadline);
		return clockOf(first === 'not added up' ? { records: [], whole: false } : first);
	}

	/**
	 * Reads windows from `from()` on, handing each window read completely to `take` (which moves
	 * `from()` on), until the list is read up to the service's time (true) or the budget is
	 * spent (false). With `progressOwed` (nothing read completely in this poll yet) the first
	 * window is read even past the budget, so that every poll moves on; it is then as small as a
	 * page. Fails when READ_ATTEMPTS windows in a row did not add up, or a request fails.
	 */
	async drain(
		from: () => number,
		take: (window: ReadWindow) => void,
		progressOwed = false,
	): Promise<boolean> {
		let owed = progressOwed;
		let to: number | undefined;
		let notAddedUp = 0;
		for (;;) {
			if (!owed && this.timeLeft() < this.pageMs) return false;
			const start = from();
			const read = await this.readWindow(start, to, owed);
			if (read.outcome === 'out of budget') return false;
			if (read.outcome === 'narrow') {
				to = read.to;
				continue;
			}
			if (read.outcome === 'not added up') {
				notAddedUp += 1;
				if (notAddedUp >= READ_ATTEMPTS) throw this.pagesDoNotAddUp();
				// A smaller window is read sooner, so records are less likely to move meanwhile.
				const { end } = read;
				to = end - start >= 2 * SECOND_MS ? endOfSecond(start + (end - start) / 2) : to;
				continue;
			}
			notAddedUp = 0;
			owed = false;
			take(read.window);
			if (read.window.to === undefined) return true;
			to = undefined;
		}
	}

	/**
	 * One window from `from` to `to` (undefined: to now): read whole, or how to narrow it. With
	 * `owed`, the time left is no bound: a window is planned to fit one page, and read.
	 */
	private async readWindow(
		from: number,
		to: number | undefined,
		owed: boolean,
	): Promise<WindowRead> {
		// The deadline bounds retry waits even when a window is owed; an attempt still gets a moment.
		const { deadline } = this.budget;
		const first = await this.firstPage(from, to, MAX_PAGE_SIZE, deadline);
		if (first === 'not added up') {
			return { outcome: first, end: to ?? this.serviceNow ?? Date.now() };
		}
		const clock = clockOf(first);
		const complete = (records: PolledRecord[]): WindowRead => ({
			outcome: 'complete',
			window: { from, to, serviceNow: clock.now, tolerance: clock.tolerance, records },
		});
		const end = to ?? clock.now;
		if (first.whole) return complete(first.records);
		// One second cannot be split by time: it is read whole, whatever the budget.
		const splittable = floorSecond(end) > from;
		const pagesLeft =
			first.total === undefined ? undefined : Math.ceil(first.total / MAX_PAGE_SIZE) - 1;
		const affordablePages =
			Math.floor((Math.max(this.timeLeft(), 0) * PLANNING_SHARE) / Math.max(this.pageMs, 1)) *
			PAGE_CONCURRENCY;
		const fits =
			pagesLeft !== undefined &&
			pagesLeft <= affordablePages &&
			(first.total as number) <= this.budget.records;
		if (fits || !splittable || first.total === undefined) {
			const rest = await this.readRest(from, to, first, splittable ? deadline : undefined);
			if (rest === 'not added up') return { outcome: rest, end };
			return rest === undefined ? this.halve(from, end, owed) : complete(rest);
		}
		let fitting = Math.min(affordablePages * MAX_PAGE_SIZE, this.budget.records);
		if (fitting < MAX_PAGE_SIZE) {
			if (!owed) return { outcome: 'out of budget' };
			fitting = MAX_PAGE_SIZE;
		}
		const share = (fitting / first.total) * PLANNING_SHARE;
		return { outcome: 'narrow', to: endOfSecond(from + (end - from) * share) };
	}

	/** Half the window, to be read again: the budget did not last for the whole. */
	private halve(from: number, end: number, owed: boolean): WindowRead {
		if (!owed && this.timeLeft() < 2 * this.pageMs) return { outcome: 'out of budget' };
		return { outcome: 'narrow', to: endOfSecond(from + (end - from) / 2) };
	}

	/**
	 * The records of a window whose first page is read, through the package's page reader: with a
	 * total, the other pages PAGE_CONCURRENCY at a time, then the check that they add up to it;
	 * without one, page after page until a short page, and a record given twice means pages
	 * moved. undefined when the budget ended first (only without a total and with a `deadline`:
	 * a window with a total was planned to fit).
	 */
	private async readRest(
		from: number,
		to: number | undefined,
		first: WindowPage,
		deadline: number | undefined,
	): Promise<PolledRecord[] | 'not added up' | undefined> {
		const byId = new Map<string, PolledRecord>();
		let repeated = 0;
		let total = first.total;
		const keep = (records: PolledRecord[]) => {
			for (const polled of records) {
				const id = recordId(polled);
				if (id === undefined) continue;
				if (byId.has(id)) repeated += 1;
				byId.set(id, polled);
			}
		};
		keep(first.records);
		// With a total the window was planned to fit; without one, it is read while the budget lasts.
		const withinBudget = deadline !== undefined && first.total === undefined;
		const read = async () => {
			for await (const page of readPages<Invoice | Asset>(this.client, {
				...this.listRead(from, to, deadline),
				startPage: FIRST_PAGE + 1,
				totalItems: first.total,
			})) {
				keep(this.polled(page.records));
				repeated += page.repeated;
				if (page.totalItems !== undefined) total = Math.max(total ?? 0, page.totalItems);
				if (page.endOfList) return 'whole';
				if (withinBudget && (this.timeLeft() < this.pageMs || byId.size >= this.budget.records)) {
					return 'out of budget';
				}
			}
			return 'short';
		};
		const outcome = await unlessPagesMoved(read());
		if (outcome === 'out of budget') return undefined;
		const reachedEnd = outcome === 'whole';
		const records = [...byId.values()];
		const addsUp = reachedEnd && (total === undefined ? repeated === 0 : records.length >= total);
		if (!addsUp) return 'not added up';
		this.budget.records -= records.length;
		return records;
	}

	/** The first page of a window (`pageSize` records at most) through the package's page reader. */
	private async firstPage(
		from: number | undefined,
		to: number | undefined,
		pageSize: number,
		deadline: number | undefined,
	): Promise<WindowPage | 'not added up'> {
		const started = Date.now();
		const read = async (): Promise<WindowPage> => {
			for await (const page of readPages<Invoice | Asset>(this.client, {
				...this.listRead(from, to, deadline),
				limit: pageSize,
				pagesInFlight: 1,
			})) {
				this.pageMs = Date.now() - started;
				this.serviceNow = page.answeredAt ?? this.serviceNow;
				return {
					records: this.polled(page.records),
					total: page.totalItems,
					whole: page.endOfList,
					serviceNow: page.answeredAt,
				};
			}
			return { records: [], whole: true };
		};
		return await unlessPagesMoved(read());
	}

	private listRead(from: number | undefined, to: number | undefined, deadline: number | undefined) {
		const window: Pick<InvoiceFilters & AssetFilters, 'updatedFrom' | 'updatedTo'> = {};
		if (from !== undefined) window.updatedFrom = toServiceTimestamp(new Date(from));
		if (to !== undefined) window.updatedTo = toServiceTimestamp(new Date(floorSecond(to)));
		return {
			path: this.kind === 'invoice' ? paths.invoices : paths.assets,
			qs: window as IDataObject,
			deadline,
		};
	}

	private polled(records: Array<Invoice | Asset>): PolledRecord[] {
		return records.map((record) => ({ kind: this.kind, record }) as PolledRecord);
	}

	private timeLeft(): number {
		return this.budget.deadline - Date.now();
	}

	private pagesDoNotAddUp(): NodeOperationError {
		return new NodeOperationError(
			this.context.getNode(),
			`The service’s list of changed ${this.kind}s did not add up after ${READ_ATTEMPTS} reads`,
			{
				description: `Its pages held fewer different ${this.kind}s than the service reported (or gave one twice), so records moved between pages while they were read. Nothing was skipped: the next poll reads the same changes again. Should this repeat, the service’s paging may differ from what this node assumes (see docs/service-contract.md in the package’s repository); please report it.`,
			},
		);
	}
}

/** The service's time of an answer, and how far to trust it (n8n's clock when it has none). */
function clockOf(page: WindowPage): { now: number; tolerance: number } {
	return page.serviceNow === undefined
		? { now: Date.now(), tolerance: UNKNOWN_CLOCK_TOLERANCE_MS }
		: { now: page.serviceNow, tolerance: OVERLAP_MS };
}

/** What a read gives, or 'not added up' when its pages did not (any other failure stands). */
async function unlessPagesMoved<T>(read: Promise<T>): Promise<T | 'not added up'> {
	return await read.catch(async (error: unknown) =>
		error instanceof PagesDoNotAddUpError ? ('not added up' as const) : await Promise.reject(error),
	);
}

function endOfSecond(ms: number): number {
	return floorSecond(ms) + SECOND_MS - 1;
}
