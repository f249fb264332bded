import { MAX_PAGE_SIZE } from '../../transport/contract';
import { readServiceTime } from '../../transport/responses';
import {
	DAY_MS,
	digestOf,
	eventsOf,
	recordId,
	type PolledEvent,
	type PolledRecord,
	type RecordKind,
} from './changes';
import { PollClock } from './clock';
import { timestampOf, type PollSeam } from './window';

/** Fetch Test Event looks this far back, then at any record: a page holds a window's newest only when whole. */
const LOOKBACK_MS = [5 * 60_000, DAY_MS, 30 * DAY_MS];
/** Reports anything: a test event is a sample, and remembers nothing. */
const ANY_EVENT = { reportIssue: () => true, reportStatus: () => true };

/**
 * Fetch Test Event: the newest record matching a selected event, changing nothing; per kind at most
 * one page of each look-back (docs/choosing-a-trigger.md#and-at-the-edges).
 */
export async function findTestEvent(
	seam: PollSeam,
	kinds: RecordKind[],
	wanted: Set<string>,
	budgetMs: number,
): Promise<PolledEvent | undefined> {
	const deadline = seam.now() + budgetMs;
	const clock = new PollClock(() => seam.now(), deadline);
	await clock.learnServiceTime(seam, kinds[0]);
	const { now } = clock.serviceNow();
	const found: Array<{ event: PolledEvent; at: number }> = [];
	for (const kind of kinds) {
		for (const lookBack of [...LOOKBACK_MS, undefined]) {
			const query = lookBack === undefined ? {} : { updatedFrom: timestampOf(now - lookBack) };
			const request = { kind, query, page: 1, pageSize: MAX_PAGE_SIZE, deadline };
			const { records } = await seam.requestPage(request);
			const matches = records.flatMap((record) => {
				const polled = { kind, record } as PolledRecord;
				const id = recordId(polled) ?? '';
				const events = id ? eventsOf(polled, id, digestOf(record), ANY_EVENT) : [];
				const event = events.filter(({ eventType }) => wanted.has(eventType)).pop();
				return event ? [{ event, at: readServiceTime(record.updatedAt) ?? -Infinity }] : [];
			});
			found.push(...matches);
			if (matches.length > 0) break;
		}
	}
	return found.sort((a, b) => b.at - a.at)[0]?.event;
}
