import type { IDataObject, IPollFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { PAGE_CONCURRENCY, type ServiceClient } from '../../transport';
import {
	FIRST_PAGE,
	MAX_PAGE_SIZE,
	pageQuery,
	paths,
	SERVICE_TIME_HEADER,
	toServiceTimestamp,
	type Asset,
	type AssetFilters,
	type Invoice,
	type InvoiceFilters,
} from '../../transport/contract';
import { readPage } from '../../transport/responses';
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

interface ListPage {
	records: PolledRecord[];
	total?: number;
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
	/** How long the latest list request took (ms); pages are planned by it. */
	private pageMs = 0;

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
		const first = await this.page(from, undefined, FIRST_PAGE, MAX_PAGE_SIZE, undefined);
		const clock = clockOf(first);
		const at = clock.now - (clock.tolerance - OVERLAP_MS);
		const whole =
			isLastPage(first, FIRST_PAGE) &&
			(first.total === undefined || first.records.length >= first.total);
		return whole && from <= at ? { at, records: first.records } : { at };
	}

	/** The service's time now, from a one-record list request. */
	async serviceTime(): Promise<{ now: number; tolerance: number }> {
		return clockOf(await this.page(undefined, undefined, FIRST_PAGE, 1, this.budget.deadline));
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
		const first = await this.page(from, to, FIRST_PAGE, MAX_PAGE_SIZE, deadline);
		const clock = clockOf(first);
		const complete = (records: PolledRecord[]): WindowRead => ({
			outcome: 'complete',
			window: { from, to, serviceNow: clock.now, tolerance: clock.tolerance, records },
		});
		const end = to ?? clock.now;
		if (isLastPage(first, FIRST_PAGE)) {
			// A short first page is the whole window, unless the total says there is more.
			const whole = first.total === undefined || first.records.length >= first.total;
			return whole ? complete(first.records) : { outcome: 'not added up', end };
		}
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
			const rest = await this.readRest(from, to, first, splittable ? deadline : undefined, owed);
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
	 * The records of a window whose first page is read: with a total, the other pages at the same
	 * time (PAGE_CONCURRENCY), then the check that they add up to it; without one, page after
	 * page until a short page, and a record given twice means pages moved. undefined when the
	 * budget ended first (only with a `deadline`; a window with a total that is `owed` is read
	 * whole, and without a total pages are read one by one while the budget lasts).
	 */
	private async readRest(
		from: number,
		to: number | undefined,
		first: ListPage,
		deadline: number | undefined,
		owed = false,
	): Promise<PolledRecord[] | 'not added up' | undefined> {
		const byId = new Map<string, PolledRecord>();
		let given = 0;
		let total = first.total;
		const keep = (page: ListPage) => {
			for (const polled of page.records) {
				const id = recordId(polled);
				given += 1;
				if (id !== undefined) byId.set(id, polled);
			}
			if (page.total !== undefined) total = Math.max(total ?? 0, page.total);
		};
		keep(first);
		const withinBudget = deadline !== undefined && !(owed && first.total !== undefined);
		if (first.total !== undefined) {
			const lastPage = FIRST_PAGE + Math.ceil(first.total / MAX_PAGE_SIZE) - 1;
			let next = FIRST_PAGE + 1;
			const worker = async () => {
				while (next <= lastPage) {
					const page = await this.page(from, to, next++, MAX_PAGE_SIZE, deadline);
					keep(page);
				}
			};
			await Promise.all(Array.from({ length: PAGE_CONCURRENCY }, worker));
		} else {
			for (let number = FIRST_PAGE + 1; ; number++) {
				if (withinBudget && (this.timeLeft() < this.pageMs || given >= this.budget.records)) {
					return undefined;
				}
				const page = await this.page(from, to, number, MAX_PAGE_SIZE, deadline);
				keep(page);
				if (isLastPage(page, number)) break;
			}
		}
		const records = [...byId.values()];
		const addsUp = total === undefined ? given === byId.size : byId.size >= total;
		if (!addsUp) return 'not added up';
		this.budget.records -= records.length;
		return records;
	}

	private async page(
		from: number | undefined,
		to: number | undefined,
		page: number,
		pageSize: number,
		deadline: number | undefined,
	): Promise<ListPage> {
		const window: Pick<InvoiceFilters & AssetFilters, 'updatedFrom' | 'updatedTo'> = {};
		if (from !== undefined) window.updatedFrom = toServiceTimestamp(new Date(from));
		if (to !== undefined) window.updatedTo = toServiceTimestamp(new Date(floorSecond(to)));
		const started = Date.now();
		const response = await this.client.requestFull({
			method: 'GET',
			path: this.kind === 'invoice' ? paths.invoices : paths.assets,
			qs: { ...window, ...pageQuery(page, pageSize) } as IDataObject,
			deadline,
		});
		this.pageMs = Date.now() - started;
		const envelope = readPage<Invoice | Asset>(response.body);
		if (!envelope) {
			throw new NodeOperationError(
				this.context.getNode(),
				'The service answered a list request with an unexpected shape',
				{
					description:
						'Expected an object with an "items" array. The Data Service’s list format may have changed; please report this. Nothing was skipped: the next poll reads the same changes again.',
				},
			);
		}
		const total = envelope.totalItems;
		const dateHeader = Object.entries(response.headers ?? {}).find(
			([name]) => name.toLowerCase() === SERVICE_TIME_HEADER,
		)?.[1];
		const serviceNow = readServiceClock(dateHeader);
		return {
			records: envelope.items.map((record) => ({ kind: this.kind, record }) as PolledRecord),
			total: typeof total === 'number' && Number.isFinite(total) ? total : undefined,
			serviceNow,
		};
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

/** The last page: shorter than asked, or the one that reaches the total. */
function isLastPage(page: ListPage, number: number): boolean {
	const readSoFar = (number - FIRST_PAGE) * MAX_PAGE_SIZE + page.records.length;
	return (
		page.records.length < MAX_PAGE_SIZE || (page.total !== undefined && readSoFar >= page.total)
	);
}

/** The service's time of an answer, and how far to trust it (n8n's clock when it has none). */
function clockOf(page: ListPage): { now: number; tolerance: number } {
	return page.serviceNow === undefined
		? { now: Date.now(), tolerance: UNKNOWN_CLOCK_TOLERANCE_MS }
		: { now: page.serviceNow, tolerance: OVERLAP_MS };
}

/** An HTTP date (the Date header) as epoch ms; undefined when absent or unreadable. */
function readServiceClock(header: unknown): number | undefined {
	const value = Array.isArray(header) ? header[0] : header;
	if (typeof value !== 'string' || !/[a-z]/i.test(value)) return undefined;
	const time = Date.parse(value);
	return Number.isFinite(time) ? time : undefined;
}

function endOfSecond(ms: number): number {
	return floorSecond(ms) + SECOND_MS - 1;
}
