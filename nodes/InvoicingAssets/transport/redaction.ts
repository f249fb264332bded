/**
 * The one redaction of what a service sends back (an error text, a header, a code) before it
 * enters an error, an item or a log line: the secrets of the run by value, in every form a service
 * may quote them in (plain, URL- or form-encoded, JSON-escaped, and mixtures of these), then any
 * delivery key after `apiKey=`, known or not (docs/troubleshooting.md, "`__redacted__` in the details").
 */
import { DELIVERY_KEY_PARAMETER } from './contract';

/** What stands where a secret was. */
export const REDACTED = '__redacted__';

/**
 * Shorter values are not looked for: the service's secrets are far longer, and a short one would
 * wipe ordinary words (a short Delivery API Key is still hidden after `apiKey=`).
 */
export const SHORTEST_REDACTED_SECRET = 8;

/** The secrets of a run (client secret, tokens, delivery keys), known by value as the run meets them. */
export class KnownSecrets {
	private readonly patterns = new Map<string, RegExp | undefined>();

	constructor(values: Iterable<unknown> = []) {
		this.add(...values);
	}

	/** Adds each value that is a string long enough to be a secret; others are ignored. */
	add(...values: unknown[]): void {
		for (const value of values) {
			if (typeof value !== 'string' || value.length < SHORTEST_REDACTED_SECRET) continue;
			if (!this.patterns.has(value)) this.patterns.set(value, undefined);
		}
	}

	/** `text` with every known secret, in any of its forms, and every delivery key replaced. */
	redact(text: string): string {
		let result = text;
		// The longest first: a secret that holds a shorter one must not be left half shown.
		const values = [...this.patterns.keys()].sort((a, b) => b.length - a.length);
		for (const value of values) {
			let pattern = this.patterns.get(value);
			if (!pattern) {
				pattern = new RegExp(quotedFormsOf(value), 'g');
				this.patterns.set(value, pattern);
			}
			result = result.replace(pattern, REDACTED);
		}
		return redactDeliveryKeys(result);
	}
}

/** Free text with the value after every `apiKey=` replaced, also URL-encoded or JSON-escaped. */
export function redactDeliveryKeys(text: string): string {
	return text.replace(DELIVERY_KEY_IN_TEXT, `$1${REDACTED}`);
}

/** A percent-escape of a hex digit pair, as sent or encoded again (`%253D`). */
function percent(byte: number): string {
	const digits = byte.toString(16).padStart(2, '0');
	return `%(?:25)*${[...digits].map(eitherCase).join('')}`;
}

function eitherCase(digit: string): string {
	return /[a-f]/.test(digit) ? `[${digit}${digit.toUpperCase()}]` : digit;
}

/** A backslash, plain or percent-encoded: what a JSON escape (or an escape of one) starts with. */
const BACKSLASH = `(?:\\\\|${percent(0x5c)})`;

/**
 * The backslashes of up to four levels of JSON escaping (1, 3, 7, 15), a bound that keeps the
 * patterns quick on a text full of backslashes.
 */
const ESCAPE = `${BACKSLASH}{1,15}`;

/** How HTML (an error page) writes the characters it must escape. */
const HTML_ENTITIES: Record<string, string> = {
	'&': '&amp;',
	'"': '&quot;|&#34;|&#x22;',
	"'": '&#39;|&#x27;|&apos;',
	'<': '&lt;',
	'>': '&gt;',
};

/** What JSON writes as a backslash and a letter, besides as \u. */
const JSON_SHORT_ESCAPES: Record<string, string> = {
	'"': '"',
	'/': '/',
	'\b': 'b',
	'\f': 'f',
	'\n': 'n',
	'\r': 'r',
	'\t': 't',
};

/** A pattern for one character of a secret (a backslash aside), in each form a quoting service may give it. */
function characterForms(char: string): string {
	// No encoding or JSON writer escapes a letter or a digit: a long token's pattern stays small.
	if (/^[A-Za-z0-9]$/.test(char)) return char;
	const forms = [
		char.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&'),
		[...Buffer.from(char, 'utf8')].map(percent).join(''),
		// JSON's \u form, of each UTF-16 unit (two for a character outside the BMP).
		Array.from(
			{ length: char.length },
			(_, unit) =>
				`${ESCAPE}u${[...char.charCodeAt(unit).toString(16).padStart(4, '0')].map(eitherCase).join('')}`,
		).join(''),
	];
	// Form encoding writes a space as `+`, which may be encoded again.
	if (char === ' ') forms.push('\\+', percent(0x2b));
	if (HTML_ENTITIES[char]) forms.push(HTML_ENTITIES[char]);
	const letter = JSON_SHORT_ESCAPES[char];
	if (letter)
		forms.push(`${ESCAPE}(?:${letter.replace('/', '\\/')}|${percent(letter.charCodeAt(0))})`);
	return forms.join('|');
}

/**
 * A pattern for a secret quoted in any mixture of its characters' forms. A run of backslashes in
 * it is one unit: as many or more (each JSON escaping doubles them), within the same bound.
 */
function quotedFormsOf(secret: string): string {
	return (secret.match(/\\+|[^\\]/gu) ?? [])
		.map((part) => {
			if (part.startsWith('\\')) return `${BACKSLASH}{${part.length},${part.length * 16}}`;
			const forms = characterForms(part);
			return forms === part ? part : `(?:${forms})`;
		})
		.join('');
}

/** `apiKey=` (or `%3D`, `\u003d`, or a JSON field `"apiKey":"`) and the value up to where a URL or a text ends it. */
const DELIVERY_KEY_IN_TEXT = new RegExp(
	`(${DELIVERY_KEY_PARAMETER}(?:=|${percent(0x3d)}|${ESCAPE}u003[dD]|${BACKSLASH}{0,15}"\\s*:\\s*${BACKSLASH}{0,15}"))` +
		`(?:(?!%(?:25)*(?:2[02367]|3[cCeE]|5[cC]))[^&#\\s"'\\\\<>])*`,
	'gi',
);
