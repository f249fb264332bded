import { createHash } from 'crypto';

import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

/**
 * The access token as the credential keeps it: bound to what it was obtained for. A token is
 * stored as `<fingerprint>.<token>`, the fingerprint a digest of the credential's Environment,
 * Base URL, Identity Service URL, Scope and Client ID (never the secret). A token is used only
 * with a credential of the same fingerprint, so that after any of those fields changed (a new API
 * key entered, another environment chosen) the old token is never sent again, not even to a new
 * Base URL: n8n's editor keeps the hidden token field when a credential is saved.
 */

/** Separates the fingerprint from the token; neither a fingerprint nor its label contains it. */
const SEPARATOR = '.';

/** Base64url characters of the SHA-256 digest kept: 132 bits, plenty to tell credentials apart. */
const FINGERPRINT_LENGTH = 22;

/** An address as requests start with it: trimmed, without trailing slashes. */
export function withoutTrailingSlashes(url: unknown): string {
	return String(url ?? '')
		.trim()
		.replace(/\/+$/, '');
}

/** The credential's Base URL as requests start with it. */
export function baseUrlOf(credentials: ICredentialDataDecryptedObject): string {
	return withoutTrailingSlashes(credentials.baseUrl);
}

/** The credential's Client ID as the token request sends it and the trigger records it: trimmed. */
export function clientIdOf(credentials: ICredentialDataDecryptedObject): string {
	return String(credentials.clientId ?? '').trim();
}

/** The credential fields a token is obtained for, as the token request and the requests use them. */
function boundFields(credentials: ICredentialDataDecryptedObject): string[] {
	const text = (name: string) => String(credentials[name] ?? '').trim();
	return [
		text('environment'),
		baseUrlOf(credentials),
		withoutTrailingSlashes(credentials.identityUrl),
		text('scope'),
		clientIdOf(credentials),
	];
}

/** The fingerprint of what a token of this credential is obtained for and sent to. */
export function tokenFingerprint(credentials: ICredentialDataDecryptedObject): string {
	return createHash('sha256')
		.update(JSON.stringify(['invoicing-assets access token', ...boundFields(credentials)]))
		.digest('base64url')
		.slice(0, FINGERPRINT_LENGTH);
}

/** The value to store in the hidden token field for a token obtained with `credentials`. */
export function bindToken(token: string, credentials: ICredentialDataDecryptedObject): string {
	return `${tokenFingerprint(credentials)}${SEPARATOR}${token}`;
}

/**
 * The token to send with `credentials`: the stored one when it was obtained for exactly these
 * fields, else undefined (none stored, one of another key or address, or one stored by a version
 * of the package that did not bind tokens).
 */
export function tokenFor(credentials: ICredentialDataDecryptedObject): string | undefined {
	const stored = String(credentials.accessToken ?? '');
	const prefix = `${tokenFingerprint(credentials)}${SEPARATOR}`;
	if (!stored.startsWith(prefix) || stored.length === prefix.length) return undefined;
	return stored.slice(prefix.length);
}
