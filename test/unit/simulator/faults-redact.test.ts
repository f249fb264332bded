import { FaultInjector } from '../../simulator/faults';
import { redactQuery, redactText, redactUrl, secretsOfUrl } from '../../simulator/redact';

describe('FaultInjector', () => {
	test('the first matching rule wins; rules without times stay', () => {
		const faults = new FaultInjector();
		faults.add({ route: 'token', status: 503, times: 1 });
		faults.add({ route: 'token', latencyMs: 10 });
		expect(faults.take('token', 'POST')?.status).toBe(503);
		expect(faults.take('token', 'POST')).toMatchObject({ latencyMs: 10, remaining: null });
		expect(faults.take('token', 'POST')).toMatchObject({ latencyMs: 10, hits: 2 });
	});

	test('probability follows the seed: 0 never, 1 always, between them some of the time', () => {
		const edges = new FaultInjector();
		edges.add({ route: 'invoices.get', status: 500, probability: 0 });
		edges.add({ route: 'invoices.list', status: 500, probability: 1 });
		for (let i = 0; i < 5; i++) {
			expect(edges.take('invoices.get', 'GET')).toBeUndefined();
			expect(edges.take('invoices.list', 'GET')?.status).toBe(500);
		}
		const pattern = (seed: number) => {
			const faults = new FaultInjector(seed);
			faults.add({ route: 'assets.list', status: 500, probability: 0.3 });
			return Array.from({ length: 50 }, () => faults.take('assets.list', 'GET') !== undefined);
		};
		expect(pattern(1)).toEqual(pattern(1));
		expect(pattern(1)).not.toEqual(pattern(2));
		const hits = pattern(3).filter(Boolean).length;
		expect(hits).toBeGreaterThan(5);
		expect(hits).toBeLessThan(30);
	});
});

describe('redaction', () => {
	test('redactUrl hides the apiKey value, other secret-looking values and passwords', () => {
		expect(redactUrl('https://h.example/w/x?apiKey=s3cr3t&tenant=a')).toBe(
			'https://h.example/w/x?apiKey=__redacted__&tenant=a',
		);
		expect(redactUrl('https://user:pw@h.example/?token=abc&sig=1')).toBe(
			'https://user:__redacted__@h.example/?token=__redacted__&sig=__redacted__',
		);
		expect(redactUrl('not a url ?apiKey=x')).toBe('[unreadable URL]');
	});

	test('redactQuery keeps ordinary values and repeated names', () => {
		const query = redactQuery(new URLSearchParams('status=paid&client_secret=x&page=1&page=2'));
		expect(query).toEqual({ status: 'paid', client_secret: '__redacted__', page: ['1', '2'] });
	});

	test('redactText replaces every occurrence; secretsOfUrl finds raw and encoded values', () => {
		const url = 'https://h.example/?apiKey=a%2Bb%2Fc';
		const secrets = secretsOfUrl(url);
		expect(secrets).toEqual(expect.arrayContaining(['a+b/c', 'a%2Bb%2Fc']));
		expect(redactText(`failed ${url} (a+b/c)`, secrets)).toBe(
			'failed https://h.example/?apiKey=__redacted__ (__redacted__)',
		);
		expect(redactText('abc', [null, undefined, ''])).toBe('abc');
	});
});
