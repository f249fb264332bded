/**
 * How the simulator's list requests are counted as polls (test/n8n/polling.ts): a poll that reads
 * several windows is one poll, and a second poller at the same moment is seen.
 */
import { EVERY_MINUTE, groupPolls, overlappingWindows, pollEvery } from '../../n8n/polling';
import type { RequestLogEntry } from '../../simulator';

/** A list request arriving at `atMs`, answered `durationMs` later. */
function request(atMs: number, page: number, durationMs = 20): RequestLogEntry {
	return {
		seq: 0,
		at: '2026-11-24T10:00:00Z',
		receivedAtMs: atMs,
		remotePort: 40_000,
		route: 'invoices.list',
		method: 'GET',
		path: '/v1/invoices',
		params: {},
		query: { updatedFrom: '2026-11-24T09:59:00Z', page: String(page) },
		status: 200,
		errorCode: null,
		clientId: 'client',
		environment: 'production',
		fault: null,
		durationMs,
	};
}

test('a poll reading three windows (one of two pages read side by side) is one poll, every 10 s', () => {
	const poll = (start: number) => [
		request(start, 1),
		request(start + 25, 2),
		request(start + 26, 3),
		request(start + 60, 1),
		request(start + 90, 1),
	];
	// Answered out of order: the log keeps the order of the answers.
	const log = [...poll(0), ...poll(10_000), ...poll(20_000)].reverse();
	const polls = groupPolls(log, 10);
	expect(polls.map((entries) => entries.length)).toEqual([5, 5, 5]);
	expect(polls.map((entries) => entries[0].receivedAtMs)).toEqual([0, 10_000, 20_000]);
	expect(polls.flatMap(overlappingWindows)).toEqual([]);
});

test('a second poller at the same seconds: its first page comes while the other poll is answered', () => {
	const log = [request(0, 1, 40), request(15, 1, 40), request(45, 2), request(70, 2)];
	const [poll] = groupPolls(log, 10);
	expect(overlappingWindows(poll)).toEqual([log[1]]);
});

describe('polls around n8n starting a workflow', () => {
	// n8n's time: 10:00:00.000 UTC on a day, a multiple of every period.
	const START = Date.UTC(2026, 10, 24, 10, 0, 0);
	const poll = (start: number) => [request(start, 1), request(start + 30, 1)];

	test('the poll at activation and the one at the next time of the Poll Times, 1 s apart, are two polls', () => {
		// Activated at 10:00:08.5 (its poll answered by 10:00:08.6); the next poll at 10:00:10.2.
		const log = [...poll(START + 8500), ...poll(START + 10_200), ...poll(START + 20_200)];
		const polls = groupPolls(log, 10, { pollTimes: pollEvery(10) });
		expect(polls.map((entries) => entries[0].receivedAtMs - START)).toEqual([8500, 10_200, 20_200]);
		// Without the Poll Times, a gap of half the period ends a poll only.
		expect(groupPolls(log, 10)).toHaveLength(2);
	});

	test('a poll at activation still being answered at the next time of the Poll Times is one poll', () => {
		// Its first page asked for at 10:00:09.9 and answered at 10:00:10.2; its next page after it.
		const log = [
			request(START + 9900, 1, 300),
			request(START + 10_210, 2),
			...poll(START + 20_200),
		];
		const polls = groupPolls(log, 10, { pollTimes: pollEvery(10) });
		expect(polls.map((entries) => entries.length)).toEqual([2, 2]);
	});

	test('a restart ends a poll, and the poll at activation after it ends at the next scheduled time', () => {
		// Stopped after the poll at 10:00:00.2, started again at 10:00:01: its poll at activation
		// at 10:00:02, the next scheduled one at 10:00:05.1 (every 5 s).
		const restartedAt = START + 1000;
		const log = [...poll(START + 200), ...poll(START + 2000), ...poll(START + 5100)];
		const polls = groupPolls(log, 5, {
			gapMs: 4000,
			restarts: [restartedAt],
			pollTimes: pollEvery(5),
		});
		expect(polls.map((entries) => entries[0].receivedAtMs - START)).toEqual([200, 2000, 5100]);
		expect(groupPolls(log, 5, { gapMs: 4000, pollTimes: pollEvery(5) })).toHaveLength(2);
	});

	test('a scheduled poll that runs past the next time of its Poll Times stays one poll', () => {
		// Its requests answered 10:00:09.9 and 10:00:10.05, either side of 10:00:10.
		const slow = [200, 5000, 9880, 10_050].map((at, index) => request(START + at, index + 1));
		const log = [...poll(START - 12_000), ...slow];
		const polls = groupPolls(log, 10, { pollTimes: pollEvery(10) });
		expect(polls.map((entries) => entries.length)).toEqual([2, 4]);
	});

	test('Every Minute: n8n draws its second, so a gap alone ends the poll at activation', () => {
		const log = [...poll(START + 8500), ...poll(START + 10_200)];
		expect(groupPolls(log, 60, { pollTimes: EVERY_MINUTE })).toHaveLength(1);
		expect(groupPolls(log, 60, { gapMs: 1000, pollTimes: EVERY_MINUTE })).toHaveLength(2);
	});
});
