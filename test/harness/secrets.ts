/**
 * "No secret appears here" checks that never print the secret: a failing `not.toContain(secret)`
 * would show it in the test output, which is one of the places it must not reach.
 */

/** Serialises a value for a secret scan, keeping what JSON.stringify drops from errors. */
export function textOf(value: unknown): string {
	if (typeof value === 'string') return value;
	return (
		JSON.stringify(value, (_key, entry: unknown) =>
			entry instanceof Error
				? { ...entry, name: entry.name, message: entry.message, stack: entry.stack }
				: entry,
		) ?? ''
	);
}

/**
 * Fails when any of `secrets` occurs in `value`, naming the place and the kind of secret only.
 * `secrets` maps each secret to its kind (e.g. "client secret"), or is a plain list of secrets.
 */
export function expectNoSecret(
	value: unknown,
	secrets: ReadonlyMap<string, string> | Iterable<string>,
	place = 'the checked text',
) {
	const text = textOf(value);
	const entries: Array<[string, string]> =
		secrets instanceof Map
			? [...(secrets as ReadonlyMap<string, string>)]
			: [...(secrets as Iterable<string>)].map((secret) => [secret, 'secret']);
	if (entries.length === 0) throw new Error('expectNoSecret was given no secret to look for');
	for (const [secret, kind] of entries) {
		if (secret !== '' && text.includes(secret)) throw new Error(`A ${kind} appears in ${place}`);
	}
}

/**
 * The forms a service that quotes a request gives a secret, by name: plain, URL-encoded
 * (encodeURIComponent), form-encoded (a space as `+`), with lower-case escapes, JSON-escaped once
 * and twice, and the combinations an echo produces (a form body JSON-escaped, a URL-encoded
 * form). Each distinct form once, under the first name that gives it.
 */
export function quotedForms(secret: string): Map<string, string> {
	const json = (text: string) => JSON.stringify(text).slice(1, -1);
	const form = new URLSearchParams({ s: secret }).toString().slice(2);
	const lowerEscapes = (text: string) =>
		text.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase());
	const named: Array<[string, string]> = [
		['plain', secret],
		['URL-encoded', encodeURIComponent(secret)],
		['form-encoded', form],
		['form-encoded, lower-case escapes', lowerEscapes(form)],
		['JSON-escaped', json(secret)],
		['JSON-escaped twice', json(json(secret))],
		['form-encoded, JSON-escaped', json(form)],
		['form-encoded, URL-encoded', encodeURIComponent(form)],
		['JSON-escaped, URL-encoded', encodeURIComponent(json(secret))],
	];
	const forms = new Map<string, string>();
	for (const [name, form] of named) if (!forms.has(form)) forms.set(form, name);
	return forms;
}

/** expectNoSecret for every form of each secret (quotedForms), naming the kind and the form found. */
export function expectNoSecretInAnyForm(
	value: unknown,
	secrets: ReadonlyMap<string, string>,
	place = 'the checked text',
) {
	const forms = new Map<string, string>();
	for (const [secret, kind] of secrets) {
		for (const [form, name] of quotedForms(secret)) forms.set(form, `${kind} (${name})`);
	}
	expectNoSecret(value, forms, place);
}
