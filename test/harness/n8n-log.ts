import { LoggerProxy, type Logger } from 'n8n-workflow';

import { textOf } from './secrets';

type Level = keyof Logger;

/** A line of n8n's log as logged: its metadata as given (e.g. an error object). */
export interface LogEntry {
	level: string;
	message: string;
	metadata?: unknown;
}

const LEVELS: Level[] = ['error', 'warn', 'info', 'debug'];

interface N8nLoggerPrototype {
	log(level: string, message: string, metadata?: unknown): void;
}

/**
 * Records everything n8n logs from now on, as `<level> <message> <metadata as JSON>` lines:
 * what goes through n8n-workflow's LoggerProxy (n8n-core's execution engine), and what n8n-core's
 * own Logger writes. That Logger re-initialises LoggerProxy with itself when it is created, so
 * the capture is put back then, and the Logger's output is recorded too (whatever its level).
 * `stop()` ends the recording.
 */
export function captureN8nLog(): { lines: string[]; entries: LogEntry[]; stop: () => void } {
	const lines: string[] = [];
	const entries: LogEntry[] = [];
	let recording = true;
	const record = (level: string, message: string, metadata?: unknown) => {
		if (!recording) return;
		lines.push(`${level} ${message} ${textOf(metadata ?? null)}`);
		entries.push({ level, message, metadata });
	};
	const capture = Object.fromEntries(
		LEVELS.map((level) => [
			level,
			(message: string, metadata?: unknown) => record(level, message, metadata),
		]),
	) as unknown as Logger;

	// Patched by hand rather than with jest.spyOn: the secret-hygiene check records it outside jest.
	const proxy = LoggerProxy as { init: (logger: Logger) => void };
	const initialise = proxy.init;
	const patched = new Set<N8nLoggerPrototype>();
	const restorers: Array<() => void> = [];
	proxy.init = (logger: Logger) => {
		const prototype = Object.getPrototypeOf(logger) as N8nLoggerPrototype;
		if (typeof prototype.log === 'function' && !patched.has(prototype)) {
			patched.add(prototype);
			const log = prototype.log;
			prototype.log = function (this: unknown, level, message, metadata) {
				record(level, message, metadata);
				return log.call(this, level, message, metadata);
			};
			restorers.push(() => (prototype.log = log));
		}
		initialise(capture);
	};
	initialise(capture);
	return {
		lines,
		entries,
		stop: () => {
			recording = false;
			proxy.init = initialise;
			for (const restore of restorers) restore();
		},
	};
}

/**
 * Records n8n's log for the whole test file (n8n-core's Logger is made once, so a capture must
 * outlive the tests), and gives what the running test added to it.
 */
export function useN8nLog(): { ofThisTest: () => string; entriesOfThisTest: () => LogEntry[] } {
	let capture: ReturnType<typeof captureN8nLog> | undefined;
	let since = 0;
	beforeAll(() => {
		capture = captureN8nLog();
	});
	afterAll(() => capture?.stop());
	beforeEach(() => {
		since = capture?.lines.length ?? 0;
	});
	return {
		ofThisTest: () => (capture?.lines ?? []).slice(since).join('\n'),
		entriesOfThisTest: () => (capture?.entries ?? []).slice(since),
	};
}
