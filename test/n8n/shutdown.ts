/* eslint-disable @n8n/community-nodes/no-restricted-globals */
/**
 * Ctrl-C and SIGTERM for the tsx entry scripts (reliability, demo, screenshots, demo smoke):
 * without a handler Node dies at once and its 'exit' hooks never run, leaving n8n (its own process
 * group) and temporary folders behind. `handleSignals()` makes the first SIGINT/SIGTERM run every
 * registered cleanup (newest first), then exit with 128 + the signal's number. Further signals
 * while cleaning up are ignored (a Ctrl-C reaches the script several times: from the terminal,
 * from tsx and from test/tools/with-test-ca.ts); a deadline ends a cleanup that hangs.
 * Jest suites do not call handleSignals; they clean up in afterAll.
 */
const cleanups = new Set<() => Promise<unknown> | unknown>();

const SIGNAL_NUMBERS: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 2, SIGTERM: 15 };

/** Runs `cleanup` if the process is interrupted; returns a function that unregisters it. */
export function onShutdown(cleanup: () => Promise<unknown> | unknown): () => void {
	cleanups.add(cleanup);
	return () => cleanups.delete(cleanup);
}

let shuttingDown: Promise<void> | undefined;

/** Runs every registered cleanup once, newest first (also for a script's own error path). */
export async function runCleanups(): Promise<void> {
	shuttingDown ??= (async () => {
		for (const cleanup of [...cleanups].reverse()) {
			cleanups.delete(cleanup);
			try {
				await cleanup();
			} catch (error) {
				process.stderr.write(`cleanup failed: ${(error as Error).message}\n`);
			}
		}
	})();
	await shuttingDown;
}

/**
 * Installs the SIGINT/SIGTERM handlers (persistent: tsx exits a child that has none left). The
 * exit code is 128 + the signal's number, or `exitCode` when stopping this way is the normal end
 * (the demo).
 */
export function handleSignals(options: { exitCode?: number; deadlineMs?: number } = {}) {
	const deadlineMs = options.deadlineMs ?? 60_000;
	for (const signal of ['SIGINT', 'SIGTERM'] as const) {
		process.on(signal, () => {
			if (shuttingDown) return;
			process.stderr.write(`\n${signal}: stopping everything this run started…\n`);
			const code = options.exitCode ?? 128 + (SIGNAL_NUMBERS[signal] ?? 1);
			setTimeout(() => {
				process.stderr.write(`cleanup did not end within ${deadlineMs / 1000} s\n`);
				process.exit(code);
			}, deadlineMs);
			void runCleanups().then(() => process.exit(code));
		});
	}
}
