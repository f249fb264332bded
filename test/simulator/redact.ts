import { DELIVERY_KEY_PARAMETER } from './contract';

/** What replaces a secret in the simulator's logs. */
export const REDACTED = '__redacted__';

/** Query or form names whose values are secrets. */
const SECRET_NAME = /key|secret|token|password|passwd|signature|^sig$|^code$/i;

export function isSecretName(name: string): boolean {
	return name === DELIVERY_KEY_PARAMETER || SECRET_NAME.test(name);
}

/** The URL with secret query values and any userinfo password replaced by REDACTED. */
export function redactUrl(value: string): string {
	let url: URL;
	try {
		url = new URL(value);
	} catch {
		return '[unreadable URL]';
	}
	if (url.password) url.password = REDACTED;
	for (const name of new Set(url.searchParams.keys())) {
		if (isSecretName(name)) url.searchParams.set(name, REDACTED);
	}
	return url.toString();
}

/** Query arguments with secret-looking values redacted; a repeated name gives an array. */
export function redactQuery(search: URLSearchParams): Record<string, string | string[]> {
	const query: Record<string, string | string[]> = {};
	for (const name of new Set(search.keys())) {
		const values = search.getAll(name).map((value) => (isSecretName(name) ? REDACTED : value));
		query[name] = values.length === 1 ? values[0] : values;
	}
	return query;
}

/** Replaces every occurrence of each secret in `text`. */
export function redactText(text: string, secrets: Array<string | null | undefined>): string {
	let result = text;
	for (const secret of secrets) {
		if (secret && secret.length >= 4) result = result.split(secret).join(REDACTED);
	}
	return result;
}

/** The secret query values of a URL (to scrub them from error messages). */
export function secretsOfUrl(value: string): string[] {
	try {
		const url = new URL(value);
		const secrets = [...url.searchParams.entries()]
			.filter(([name]) => isSecretName(name))
			.flatMap(([, secret]) => [secret, encodeURIComponent(secret)]);
		if (url.password) secrets.push(url.password, decodeURIComponent(url.password));
		return secrets;
	} catch {
		return [];
	}
}
