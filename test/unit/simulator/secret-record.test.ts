/* eslint-disable @n8n/community-nodes/no-restricted-imports */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { SimulatorClock } from '../../simulator/clock';
import { ClientRegistry, TokenStore } from '../../simulator/identity';
import { SecretRecord } from '../../simulator/secret-record';

describe('SecretRecord (secret-hygiene support)', () => {
	let dir: string;
	beforeEach(() => {
		dir = mkdtempSync(join(tmpdir(), 'secret-record-'));
	});
	afterEach(() => rmSync(dir, { recursive: true, force: true }));

	const recorded = () =>
		readdirSync(dir)
			.filter((file) => file.endsWith('.secrets'))
			.flatMap((file) => readFileSync(join(dir, file), 'utf8').trim().split('\n'));

	test('marks made-up client secrets and tokens and records every secret handled', () => {
		const record = new SecretRecord('MkMARKERMk', dir);
		const clock = new SimulatorClock();
		const clients = new ClientRegistry(clock, record);
		const tokens = new TokenStore(clock, clients, record);
		const made = clients.register({ environment: 'production' });
		const explicit = ['given', 'secret', '123'].join('-');
		const given = clients.register({ environment: 'production', clientSecret: explicit });
		const rotated = clients.rotateSecret(made.clientId);
		const { accessToken } = tokens.issue(made);
		record.note('deliveryKey', 'a-delivery-key-of-some-length');

		expect(/^MkMARKERMkcs[A-Za-z0-9_-]{40}$/.test(made.clientSecret)).toBe(true);
		expect(rotated.clientSecret.startsWith('MkMARKERMkcs')).toBe(true);
		expect(/^MkMARKERMktk[A-Za-z0-9_-]{43}$/.test(accessToken)).toBe(true);
		expect(clients.authenticate(made.clientId, rotated.clientSecret).ok).toBe(true);
		const lines = recorded().map((line) => line.split('\t'));
		expect(lines.map(([kind]) => kind)).toEqual([
			'clientSecret',
			'clientSecret',
			'clientSecret',
			'token',
			'deliveryKey',
		]);
		const values = [
			made.clientSecret,
			given.clientSecret,
			rotated.clientSecret,
			accessToken,
			'a-delivery-key-of-some-length',
		];
		expect(lines.map(([, value], index) => value === values[index])).toEqual(
			values.map(() => true),
		);

		record.saveLogs({ requests: [{ route: 'invoices.get' }] });
		const log = readdirSync(dir).find((file) => file.endsWith('.log.json')) ?? '';
		expect(JSON.parse(readFileSync(join(dir, log), 'utf8'))).toEqual({
			requests: [{ route: 'invoices.get' }],
		});
	});

	test('without a marker or a folder, secrets are plain random and nothing is written', () => {
		const record = new SecretRecord('', '');
		const clients = new ClientRegistry(new SimulatorClock(), record);
		const { clientSecret } = clients.register({ environment: 'sandbox' });
		expect(/^[A-Za-z0-9_-]{40}$/.test(clientSecret)).toBe(true);
		record.saveLogs({});
		expect(readdirSync(dir)).toEqual([]);
	});
});
