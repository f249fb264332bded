/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/**
 * `npm start`: the simulator and a real n8n over HTTPS, with an owner, a credential for the
 * simulator (tested through n8n's API) and the example workflow published. The simulator issues an
 * invoice every 30 s (`--every <seconds>`, at least 5), so executions appear in the editor; each
 * ended execution prints one line (test/demo/narrate.ts). Ctrl-C
 * (or SIGTERM) stops everything and exits 0; a failure on the way up stops what had started and
 * exits 1. test/demo/smoke.ts checks all of this.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import { createCredential } from '../n8n/credentials';
import { EXAMPLES, loadExample } from '../n8n/examples';
import { waitFor } from '../n8n/executions';
import { freePort, N8nInstance } from '../n8n/instance';
import { REPOSITORY } from '../n8n/package';
import { handleSignals, onShutdown, runCleanups } from '../n8n/shutdown';
import { startSimulator } from '../simulator';
import { demoCertificateAuthority } from './ca';
import { narrateExecutions } from './narrate';

const OWNER = { email: 'demo@example.com', password: 'Demo-Passw0rd!' };

function print(line = '') {
	process.stdout.write(`${line}\n`);
}

async function portOr(preferred: number): Promise<number> {
	const { createServer } = await import('node:net');
	return await new Promise((resolve) => {
		const probe = createServer();
		probe.once('error', () => resolve(freePort()));
		probe.listen(preferred, '127.0.0.1', () => probe.close(() => resolve(preferred)));
	});
}

async function main() {
	const { values } = parseArgs({ options: { every: { type: 'string', default: '30' } } });
	const everySeconds = Math.max(5, Number(values.every) || 30);

	// Ctrl-C is how the demo ends: every cleanup registered below runs, newest first, then exit 0.
	handleSignals({ exitCode: 0 });
	onShutdown(() => print('Stopped.'));
	const caDir = demoCertificateAuthority(join(REPOSITORY, '.tmp/demo/ca'));
	print('Starting the simulator…');
	const sim = await startSimulator({ caDir, invoices: 200, assets: 60 });
	onShutdown(async () => await sim.close());
	print('Starting n8n (the first run installs it: about 5 minutes)…');
	// The instance registers its own stop (and the removal of its folder) with test/n8n/shutdown.ts.
	const n8n = new N8nInstance({ name: 'demo', caDir, owner: OWNER, port: await portOr(5678) });
	const timers: NodeJS.Timeout[] = [];
	onShutdown(() => {
		for (const timer of timers) clearInterval(timer);
		print('\nStopping n8n and the simulator…');
	});

	await n8n.start();
	const credential = await createCredential(n8n, sim, 'Invoicing & Assets account (simulator)');
	const tested = await n8n.api<{ status: string; message: string }>(
		'POST',
		`/credentials/${credential.id}/test`,
	);
	if (tested.body.status !== 'OK') {
		throw new Error(`the demo credential's test failed: ${tested.body.message ?? tested.status}`);
	}
	print(`Credential test: OK ("${credential.name}" against the simulator)`);
	const workflow = await n8n.api<{ id: string }>(
		'POST',
		'/workflows',
		loadExample(EXAMPLES.newInvoice, credential),
	);
	if (workflow.status !== 200) throw new Error(`importing the example failed: ${workflow.status}`);
	await n8n.api('POST', '/workflows', loadExample(EXAMPLES.overdueReport, credential));
	const published = await n8n.api('POST', `/workflows/${workflow.body.id}/publish`);
	if (published.status !== 200) {
		throw new Error(`publishing the example failed: ${published.status} ${published.text}`);
	}
	await waitFor(
		'the trigger to subscribe at the simulator',
		() => sim.subscriptions.list().length > 0,
	);
	const issue = () => {
		const { invoice } = sim.issueInvoice();
		print(
			`${new Date().toISOString()}  issued invoice ${invoice.invoiceNumber} (${invoice.totalAmount} ${invoice.currency})`,
		);
	};
	issue();
	timers.push(setInterval(issue, everySeconds * 1000));

	print('');
	print('Ready.');
	print(`  Open            ${n8n.url}/workflow/${workflow.body.id}   (then the Executions tab)`);
	print(`  Sign in as      ${OWNER.email} / ${OWNER.password}`);
	print(
		`  Browser warning n8n's certificate comes from the demo CA ${join(caDir, 'ca.pem')}, which is limited to localhost, 127.0.0.1 and ::1 (name constraints): accept the warning, or trust that CA`,
	);
	print(`  Subscriptions   ${sim.subscriptions.list().length} registered at the simulator`);
	print(
		`  Simulator       service ${sim.serviceUrl}, identity ${sim.identityUrl}, control ${sim.controlUrl}`,
	);
	print(`  New invoice     every ${everySeconds} s (change with: npm start -- --every 10)`);
	print(
		'  Executions      one line each below: its number, the invoice, the assets fetched, the outcome',
	);
	print('');
	print('Press Ctrl-C to stop.');
	print('');
	// One line per ended execution (those that ended before this point too), oldest first.
	onShutdown(narrateExecutions(n8n, workflow.body.id, print));
}

main().catch(async (error: Error) => {
	process.stderr.write(`${error.stack ?? error.message}\n`);
	await runCleanups();
	process.exit(1);
});
