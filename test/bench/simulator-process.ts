/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/**
 * The simulator in its own process for the benchmark, so that the service's work does not share
 * the event loop (or the core) of the client being measured, as with a real remote service.
 * It counts the TLS connections its HTTPS listeners accept, to show how many handshakes each
 * client paid. Talks to its parent over IPC: it sends `{ type: 'ready', state }` once listening,
 * answers `{ type: 'stats' }` with `{ type: 'stats', connections, cpuMs }`, and exits on `{ type: 'close' }`.
 */
import https from 'node:https';

let tlsConnections = 0;

// Wrap before the simulator is loaded, so that its listeners are created through the wrapper.
const createServer = https.createServer;
https.createServer = ((...args: Parameters<typeof createServer>) => {
	const server = createServer(...args);
	server.on('secureConnection', () => (tlsConnections += 1));
	return server;
}) as typeof createServer;

async function main() {
	const { startSimulator } = await import('../simulator');
	const invoices = Number(process.env.BENCH_INVOICES ?? 20_000);
	// The contract check's cost stays out of the figures (the tests run it).
	const sim = await startSimulator({ invoices, assets: 300, logLimit: 1000, checkContract: false });
	const send = (message: unknown) => process.send?.(message);
	process.on('message', (message: { type?: string }) => {
		if (message.type === 'stats') {
			const cpu = process.cpuUsage();
			send({ type: 'stats', connections: tlsConnections, cpuMs: (cpu.user + cpu.system) / 1000 });
		}
		if (message.type === 'close') {
			void sim.close().then(() => process.exit(0));
		}
	});
	process.on('disconnect', () => void sim.close().then(() => process.exit(0)));
	send({ type: 'ready', state: sim.state() });
}

void main();
