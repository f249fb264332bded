/**
 * What n8n's schedulers need of a poll beyond finding changes: the legacy one may start a poll
 * while the last of the same trigger still runs, and the durable one saves a reporting poll's
 * state only after it returned (docs/choosing-a-trigger.md#polls-that-overlap-and-polls-n8n-gave-up).
 * Both are per n8n process.
 */

/** A poll running this long past its budget may have been given up by n8n (which allows 9 s): it stores nothing. */
export const ABANDONED_AFTER_MS = 5_000;

/** How long a poll that finds the state the last reporting poll read waits for n8n to save the new one. */
export const COMMIT_WAIT_MS = 60_000;

export interface PollTurn {
	/** The trigger: its workflow and node. */
	key: string;
	/** The version of the static data the poll read. */
	stateVersion: unknown;
	/** Past this (n8n's time), n8n may have given the poll up. */
	givenUpAfter: number;
}

const runningPolls = new Map<string, PollTurn>();

/** The last poll of each trigger that reported: the state version it read, and when it returned. */
const reportingPolls = new Map<string, { stateVersion: unknown; at: number }>();

/**
 * A poll's turn, or undefined when it is to report nothing: another poll of the trigger runs, or
 * n8n has not yet saved the state the last reporting poll left (it would report the same again).
 */
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

/**
 * Ends a poll's turn. False when n8n may have given it up (a later poll took over, or it ran too
 * long): it then stores and reports nothing, and the next poll reads it again.
 */
export function endPoll(turn: PollTurn, now: number, reports: boolean): boolean {
	const current = runningPolls.get(turn.key) === turn;
	if (current) runningPolls.delete(turn.key);
	if (!current || now > turn.givenUpAfter) return false;
	if (reports) reportingPolls.set(turn.key, { stateVersion: turn.stateVersion, at: now });
	return true;
}
