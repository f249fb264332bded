/* eslint-disable @n8n/community-nodes/no-restricted-imports -- the axios instance n8n's HTTP helpers use */
/**
 * Shortens the request timeout a node asks n8n for, so that a test of a timeout waits a second,
 * not the node's 30 s. n8n's HTTP helpers (n8n-core 2.x through @n8n/backend-network, and 1.x)
 * send every request through axios's default instance, the one this file imports: an interceptor
 * there sends each request that asks for exactly `asked` ms with `instead` ms, and notes it. The
 * node sees an ordinary timeout error, so what it does with one (its message, no retry of a
 * create) is what the test checks, and `shortened` shows which requests asked for `asked`.
 */
import axios from 'axios';

export interface ShortenedTimeouts {
	/** The requests sent with the shorter timeout so far: `METHOD path`. */
	shortened: string[];
	/** Removes the interceptor. */
	restore(): void;
}

export function shortenRequestTimeouts(asked: number, instead: number): ShortenedTimeouts {
	const shortened: string[] = [];
	const id = axios.interceptors.request.use((config) => {
		if (config.timeout === asked) {
			shortened.push(`${config.method?.toUpperCase()} ${new URL(config.url ?? '').pathname}`);
			config.timeout = instead;
		}
		return config;
	});
	return { shortened, restore: () => axios.interceptors.request.eject(id) };
}
