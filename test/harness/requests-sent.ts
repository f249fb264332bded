/* eslint-disable @n8n/community-nodes/no-restricted-imports -- the axios instance n8n's HTTP helpers use */
/**
 * Counts the requests nodes hand to n8n's HTTP helpers, by path: those go through axios's
 * default instance (see request-timeouts.ts). A test that waits until the simulator has seen as
 * many knows that nothing is still on its way, without waiting for a time.
 */
import axios from 'axios';

export interface RequestsSent {
	/** Requests sent to an address whose path ends with `path` since the count began. */
	to(path: string): number;
	/** Stops counting. */
	restore(): void;
}

export function countRequestsSent(): RequestsSent {
	const sent = new Map<string, number>();
	const id = axios.interceptors.request.use((config) => {
		const path = new URL(config.url ?? '', 'https://unknown.invalid').pathname;
		sent.set(path, (sent.get(path) ?? 0) + 1);
		return config;
	});
	return {
		to: (path) =>
			[...sent].reduce((sum, [sentTo, count]) => sum + (sentTo.endsWith(path) ? count : 0), 0),
		restore: () => axios.interceptors.request.eject(id),
	};
}
