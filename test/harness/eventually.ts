/* eslint-disable @n8n/community-nodes/no-restricted-globals */

/**
 * Polls until `check` is true, for work that ends on its own (e.g. n8n removing a test
 * registration, a request reaching the simulator). The bound only ends a test whose awaited
 * event never comes, with a message: it is far above what any load makes such work take.
 */
export async function eventually(check: () => boolean, timeoutMs = 30_000) {
	const deadline = Date.now() + timeoutMs;
	while (!check()) {
		if (Date.now() > deadline) throw new Error(`Not true within ${timeoutMs} ms`);
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
}

/** A real pause, for tests that must leave a faulty product a moment to show itself (never to pass). */
export async function pause(ms: number) {
	await new Promise((resolve) => setTimeout(resolve, ms));
}
