/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/**
 * `npm start`: the simulator and a real n8n over HTTPS, with an owner, a credential for the
 * simulator and the example workflow published. The simulator issues an invoice every 30 s
 * (`--every <seconds>`), so executions appear in the editor. Ctrl-C stops everything.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import { EXAMPLES, loadExample } from '../n8n/examples';
import { waitFor } from '../n8n/executions';
import { freePort, N8nInstance } from '../n8n/instance';
import { REPOSITORY } from '../n8n/package';
import { startSimulator } from '../simulator';
import {
	certificateValidFor,
	createCertificateAuthority,
	findCertificateAuthority,
} from '../simulator/tls';

const OWNER = { email: 'demo@example.com', password: 'Demo-Passw0rd!' };

function print(line = '') {
	process.stdout.write(`${line}\n`);
}

/** A CA kept in .tmp/demo/ca across runs, so a browser told to trust it once keeps trusting it. */
function demoCertificateAuthority(): string {
	const dir = join(REPOSITORY, '.tmp/demo/ca');
	const existing = findCertificateAuthority(dir);
	if (!existing || !certificateValidFor(existing.certPath, 24 * 3600)) {
		mkdirSync(dir, { recursive: true });
		createCertificateAuthority(dir, { days: 365, commonName: 'Invoicing & Assets demo CA' });
	}
	return dir;
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

	const caDir = demoCertificateAuthority();
	print('Starting the simulator…');
	const sim = await startSimulator({ caDir, invoices: 200, assets: 60 });
	print('Starting n8n (the first run installs it: about 5 minutes)…');
	const n8n = new N8nInstance({ name: 'demo', caDir, owner: OWNER, port: await portOr(5678) });

	const timers: NodeJS.Timeout[] = [];
	let stopping = false;
	const stop = async () => {
		if (stopping) return;
		stopping = true;
		for (const timer of timers) clearInterval(timer);
		print('\nStopping n8n and the simulator…');
		await n8n.dispose();
		await sim.close();
		print('Stopped.');
		process.exit(0);
	};
	process.on('SIGINT', () => void stop());
	process.on('SIGTERM', () => void stop());

	await n8n.start();
	const created = await n8n.api<{ id: string; name: string }>('POST', '/credentials', {
		name: 'Invoicing & Assets account (simulator)',
		type: 'invoicingAssetsApi',
		data: {
			environment: 'production',
			baseUrl: sim.serviceUrl,
			identityUrl: sim.identityUrl,
			scope: sim.defaultClient.scope,
			clientId: sim.defaultClient.clientId,
			clientSecret: sim.defaultClient.clientSecret,
		},
	});
	const credential = { id: created.body.id, name: created.body.name };
	const workflow = await n8n.api<{ id: string }>(
		'POST',
		'/workflows',
		loadExample(EXAMPLES.newInvoice, credential),
	);
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
		`  Browser warning n8n's certificate comes from the demo CA ${join(caDir, 'ca.pem')}; trust it once, or accept the warning`,
	);
	print(`  Subscriptions   ${sim.subscriptions.list().length} registered at the simulator`);
	print(
		`  Simulator       service ${sim.serviceUrl}, identity ${sim.identityUrl}, control ${sim.controlUrl}`,
	);
	print(`  New invoice     every ${everySeconds} s (change with: npm start -- --every 10)`);
	print('');
	print('Press Ctrl-C to stop.');
}

main().catch((error: Error) => {
	process.stderr.write(`${error.stack ?? error.message}\n`);
	process.exit(1);
});
