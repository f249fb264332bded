import {
	KnownSecrets,
	REDACTED,
	SHORTEST_REDACTED_SECRET,
	redactDeliveryKeys,
} from '../../../nodes/InvoicingAssets/transport/redaction';
import { expectNoSecretInAnyForm, quotedForms } from '../../harness/secrets';

const redactText = (text: string, secrets: Iterable<unknown>) =>
	new KnownSecrets(secrets).redact(text);

/** Secrets of characters the forms change: `~` (form encoding only), space, `+/=&`, quotes, `\\`, non-ASCII. */
const SECRETS = new Map([
	['Q8~cs+a/b=c&d e"f\\g\'h<i>j%k-é€😀', 'client secret'],
	['eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl', 'access token'],
	['k3y/with+plus=&amp;"quote"', 'delivery key'],
]);

describe('the run’s secrets, by value', () => {
	// Named by kind only, and a failure names the forms: a test's output never shows a secret.
	test.each([...SECRETS].map(([secret, kind]) => [kind, secret]))(
		'every form of the %s is hidden, and the words around it are kept',
		(_kind, secret) => {
			const secrets = new KnownSecrets([secret]);
			const shown = [...quotedForms(secret)]
				.filter(([form]) => secrets.redact(`before ${form} after`) !== `before ${REDACTED} after`)
				.map(([, name]) => name);
			expect(shown).toEqual([]);
		},
	);

	test('a form body echoed inside a JSON error, and a URL quoted percent-encoded, are hidden', () => {
		const [clientSecret, token, deliveryKey] = [...SECRETS.keys()];
		const form = new URLSearchParams({
			grant_type: 'client_credentials',
			client_secret: clientSecret,
		}).toString();
		const url = `https://n8n.example.com/webhook/x?${new URLSearchParams({ apiKey: deliveryKey })}`;
		const echo = JSON.stringify({
			error: 'invalid_request',
			error_description: `Bad form: ${form}; headers {"authorization":"Bearer ${token}"}`,
			body: JSON.stringify({ notificationUrl: url }),
			quoted: encodeURIComponent(url),
		});
		const redacted = redactText(echo, SECRETS.keys());
		expectNoSecretInAnyForm(redacted, SECRETS, 'the redacted echo');
		expect(redacted).toContain(`client_secret=${REDACTED}`);
		expect(redacted).toContain(`Bearer ${REDACTED}`);
		expect(redacted).toContain('grant_type=client_credentials');
	});

	test('escapes in either case, mixed with plain characters, are hidden too', () => {
		const secret = 'pl+us=eq/sl ash';
		expect(redactText('x pl%2bus%3deq%2Fsl+ash y', [secret])).toBe(`x ${REDACTED} y`);
		expect(redactText('x pl\\u002Bus\\u003deq\\/sl\\u0020ash y', [secret])).toBe(`x ${REDACTED} y`);
	});

	test('a secret that holds another is hidden whole, whatever the order they were learnt in', () => {
		const inner = 'abcdefgh1234';
		const outer = `XY${inner}ZW-long`;
		expect(new KnownSecrets([inner, outer]).redact(`a ${outer} b ${inner}`)).toBe(
			`a ${REDACTED} b ${REDACTED}`,
		);
	});

	test(`values shorter than ${SHORTEST_REDACTED_SECRET} characters, empty ones and non-strings are not looked for`, () => {
		const text = 'The service said: e is not a valid value for the field a (code 1).';
		const secrets = new KnownSecrets([
			'',
			'e',
			'a',
			'1',
			'field',
			'x'.repeat(SHORTEST_REDACTED_SECRET - 1),
		]);
		secrets.add(undefined, null, 42, { secret: 'abcdefghijkl' });
		expect(secrets.redact(text)).toBe(text);
		expect(
			redactText(`${text} ${'x'.repeat(SHORTEST_REDACTED_SECRET)}`, [
				'x'.repeat(SHORTEST_REDACTED_SECRET),
			]),
		).toBe(`${text} ${REDACTED}`);
	});
});

describe('delivery keys in free text, known or not', () => {
	test('every delivery key is hidden, whole, and the words around it are kept', () => {
		expect(
			redactDeliveryKeys(
				'https://a.example/h?apiKey=s3cr3ts_s-9 did not answer; "https://b.example/h?x=1&APIKEY=ssss" neither',
			),
		).toBe(
			`https://a.example/h?apiKey=${REDACTED} did not answer; "https://b.example/h?x=1&APIKEY=${REDACTED}" neither`,
		);
	});

	test('after an encoded `=` (once or twice), a \\u escape, or as a JSON field, up to where the value ends', () => {
		const quoted = [
			[
				'url=https%3A%2F%2Fn%2Fw%3FapiKey%3Dab%2Bc.d%26tenant%3D1',
				`url=https%3A%2F%2Fn%2Fw%3FapiKey%3D${REDACTED}%26tenant%3D1`,
			],
			[
				'u=https%253A%252F%252Fn%253FapiKey%253Dabc%2526t%253D1',
				`u=https%253A%252F%252Fn%253FapiKey%253D${REDACTED}%2526t%253D1`,
			],
			[
				'"https://n/w?apiKey\\u003dabc\\u0026t=1"',
				`"https://n/w?apiKey\\u003d${REDACTED}\\u0026t=1"`,
			],
			['{"apiKey":"abc","t":1}', `{"apiKey":"${REDACTED}","t":1}`],
			['{\\"apiKey\\": \\"abc\\"}', `{\\"apiKey\\": \\"${REDACTED}\\"}`],
		];
		for (const [text, redacted] of quoted) expect(redactDeliveryKeys(text)).toBe(redacted);
	});
});
