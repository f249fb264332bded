/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/* eslint-disable @n8n/community-nodes/no-dangerous-functions -- test tooling: runs apt-get */
/**
 * apt-get for the scripts that install Debian packages (Chromium for the editor checks, Redis and
 * PostgreSQL for queue mode): never interactive (no prompt, no configuration-file question, no
 * service-restart dialog) and never unbounded (a lock wait of at most 5 minutes, and the whole
 * command killed after `timeoutMs`).
 */
import { spawnSync } from 'node:child_process';

export interface AptResult {
	ok: boolean;
	/** Why it failed: the last line apt-get wrote to stderr, its exit code, or the timeout. */
	reason: string;
}

export function aptGet(args: string[], timeoutMs = 10 * 60_000): AptResult {
	const ran = spawnSync(
		'apt-get',
		[
			'-y',
			'-qq',
			'-o',
			'DPkg::Lock::Timeout=300',
			'-o',
			'Dpkg::Options::=--force-confdef',
			'-o',
			'Dpkg::Options::=--force-confold',
			...args,
		],
		{
			encoding: 'utf8',
			stdio: ['ignore', 'ignore', 'pipe'],
			timeout: timeoutMs,
			killSignal: 'SIGTERM',
			env: {
				...process.env,
				DEBIAN_FRONTEND: 'noninteractive',
				NEEDRESTART_MODE: 'a',
				APT_LISTCHANGES_FRONTEND: 'none',
			},
		},
	);
	if (ran.status === 0) return { ok: true, reason: '' };
	const lastLine =
		(ran.stderr ?? '')
			.trim()
			.split('\n')
			.filter((line) => line.trim() !== '')
			.pop() ?? '';
	const reason =
		ran.error && (ran.error as NodeJS.ErrnoException).code === 'ETIMEDOUT'
			? `apt-get ${args[0]} did not finish within ${timeoutMs / 60_000} min`
			: lastLine || `apt-get ${args[0]} ended with ${ran.status ?? ran.signal}`;
	return { ok: false, reason };
}
