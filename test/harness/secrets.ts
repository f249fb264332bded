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
