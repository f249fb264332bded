/**
 * How the simulator's list requests are counted as polls (test/n8n/polling.ts): a poll that reads
 * several windows is one poll, and a second poller at the same moment is seen.
 */
import { groupPolls, overlappingWindows } from '../../n8n/polling';
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
