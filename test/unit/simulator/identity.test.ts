import { SimulatorClock } from '../../simulator/clock';
import { ClientRegistry, formatExpiry } from '../../simulator/identity';
import { expectNoSecret } from '../../harness/secrets';

const MINUTE = 60 * 1000;

function setup() {
	const clock = new SimulatorClock();
	return { clock, clients: new ClientRegistry(clock) };
}

describe('ClientRegistry', () => {
	test('generates ids and secrets, keeps only a hash, authenticates', () => {
		const { clients } = setup();
		const record = clients.register({ environment: 'production' });
		expect(record.clientId).toMatch(/^[0-9a-f-]{36}$/);
		expectNoSecret(clients.get(record.clientId), [record.clientSecret], 'the stored client');
		expect(clients.authenticate(record.clientId, record.clientSecret).ok).toBe(true);
		expect(clients.authenticate(record.clientId, 'wrong-secret')).toEqual({
			ok: false,
			reason: 'wrong_secret',
		});
		expect(clients.authenticate('nobody', record.clientSecret)).toEqual({
			ok: false,
			reason: 'unknown_client',
		});
		expect(() =>
			clients.register({ environment: 'production', clientId: record.clientId }),
		).toThrow(/already/);
		expect(() => clients.register({ environment: 'staging' as 'production' })).toThrow(
			/environment/,
		);
		expect(() => clients.register({ environment: 'production', scope: 'api://x' })).toThrow(
			/\/\.default/,
		);
		expect(() => clients.register({ environment: 'production', clientSecret: 'short' })).toThrow(
			/8/,
		);
	});

	test('the expiry is 12 calendar months ahead unless given, at most that, and never past', () => {
		const { clients, clock } = setup();
		const twelveMonthsOn = (date: Date) => new Date(date.setUTCMonth(date.getUTCMonth() + 12));
		const latest = twelveMonthsOn(clock.now());
		const byDefault = clients.register({ environment: 'sandbox' });
		// Twelve months after the moment of registration, which lies between these two.
		const expiry = byDefault.keyExpiresAt.getTime();
		expect(expiry).toBeGreaterThanOrEqual(latest.getTime());
		expect(expiry).toBeLessThanOrEqual(twelveMonthsOn(clock.now()).getTime());
		expect(byDefault.clientSecret.length).toBeGreaterThanOrEqual(20);
		expect(byDefault.scope).toMatch(/\/\.default$/);
		expect(() =>
			clients.register({
				environment: 'production',
				keyExpiresAt: new Date(clock.now().getTime() - 24 * 60 * MINUTE),
			}),
		).toThrow(/future/);
		const ok = clients.register({
			environment: 'sandbox',
			keyExpiresAt: new Date(latest.getTime() - 1000),
		});
		expect(ok.keyExpiresAt.getTime()).toBe(latest.getTime() - 1000);
		expect(() =>
			clients.register({
				environment: 'sandbox',
				keyExpiresAt: new Date(latest.getTime() + 60 * MINUTE),
			}),
		).toThrow(/12 months/);
	});
});

describe('formatExpiry', () => {
	test('a date for midnight, a timestamp otherwise', () => {
		expect(formatExpiry(new Date(Date.UTC(2027, 0, 31)))).toBe('2027-01-31');
		expect(formatExpiry(new Date(Date.UTC(2027, 0, 31, 8, 30)))).toBe('2027-01-31T08:30:00Z');
	});
});
