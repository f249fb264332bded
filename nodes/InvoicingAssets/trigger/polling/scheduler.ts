// n8n's schedulers: the legacy one may overlap polls of a trigger, the durable one saves a reporting poll's
// state after it returned (docs/choosing-a-trigger.md#polls-that-overlap-and-polls-n8n-gave-up). Per process.

/** A poll running this long past its budget may have been given up by n8n (which allows 9 s): it stores nothing. */
export const ABANDONED_AFTER_MS = 5_000;

/** How long a poll that finds the state the last reporting poll read waits for n8n to save the new one. */
export const COMMIT_WAIT_MS = 60_000;

/** A poll of a trigger, the static data version it read, and when n8n may have given it up. */
export type PollTurn = { key: string; stateVersion: unknown; givenUpAfter: number };

const runningPolls = new Map<string, PollTurn>();
/** The last poll of each trigger that reported: the state version it read, and when it returned. */
const reportingPolls = new Map<string, { stateVersion: unknown; at: number }>();

/** A poll's turn; none while another poll of the trigger runs, or n8n has not saved the last reporting one's state. */
export function beginPoll(
	key: string,
	stateVersion: unknown,
	now: number,
	deadline: number,
): PollTurn | undefined {
	const running = runningPolls.get(key);
	if (running && running.givenUpAfter > now) return undefined;
	const reporting = reportingPolls.get(key);
	const unsaved = stateVersion !== undefined && reporting?.stateVersion === stateVersion;
	if (unsaved && now - (reporting?.at ?? 0) < COMMIT_WAIT_MS) return undefined;
	const turn = { key, stateVersion, givenUpAfter: deadline + ABANDONED_AFTER_MS };
	runningPolls.set(key, turn);
	return turn;
}

/** Ends a poll's turn: false when n8n may have given it up, so that it stores and reports nothing. */
export function endPoll(turn: PollTurn, now: number, reports: boolean): boolean {
	const current = runningPolls.get(turn.key) === turn;
	if (current) runningPolls.delete(turn.key);
	if (!current || now > turn.givenUpAfter) return false;
	if (reports) reportingPolls.set(turn.key, { stateVersion: turn.stateVersion, at: now });
	return true;
}
