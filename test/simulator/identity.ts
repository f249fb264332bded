/**
 * The identity portal's API keys and the identity service's access tokens.
 *
 * Choices where the contract is silent:
 * - Secrets are kept only as SHA-256 hashes (the provider cannot recover a secret); the record
 *   with the secret is returned once, at registration or rotation.
 * - A key works until `keyExpiresAt` (simulated clock), exclusive. Registration refuses an
 *   expiry in the past or more than 12 calendar months ahead.
 * - Tokens are opaque random strings, valid 60 simulated minutes and only while their key has not
 *   expired. Rotating a secret leaves issued tokens valid; the old secret stops working at once.
 * - A key deleted in the portal is gone: its client ID is unknown to the token endpoint and its
 *   tokens are refused at once (`key_deleted`).
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

import {
	ACCESS_TOKEN_LIFETIME_SECONDS,
	API_KEY_MAX_LIFETIME_MONTHS,
	SCOPE_SUFFIX,
	toServiceTimestamp,
} from './contract';
import type { SimulatorClock } from './clock';
import { SecretRecord } from './secret-record';
import {
	ENVIRONMENTS,
	type ClientRecord,
	type ClientRecordJson,
	type ClientRegistration,
	type Environment,
} from './types';

export const DEFAULT_SCOPE = `api://invoicing-assets${SCOPE_SUFFIX}`;

interface StoredClient {
	clientId: string;
	secretHash: Buffer;
	scope: string;
	environment: Environment;
	keyExpiresAt: Date;
	createdAt: Date;
	displayName: string;
}

export type ClientCheck =
	| { ok: true; client: StoredClient }
	| { ok: false; reason: 'unknown_client' | 'wrong_secret' };

export class ClientRegistry {
	private clients = new Map<string, StoredClient>();

	constructor(
		private readonly clock: SimulatorClock,
		private readonly secrets = new SecretRecord(),
	) {}

	get size(): number {
		return this.clients.size;
	}

	register(registration: ClientRegistration): ClientRecord {
		const now = this.clock.now();
		if (!ENVIRONMENTS.includes(registration.environment)) {
			throw new Error(`environment must be one of ${ENVIRONMENTS.join(', ')}.`);
		}
		const clientId = registration.clientId ?? randomUUID();
		if (typeof clientId !== 'string' || clientId.trim() === '') {
			throw new Error('clientId must be a non-empty string.');
		}
		if (this.clients.has(clientId))
			throw new Error(`Client ID '${clientId}' is already registered.`);
		const clientSecret =
			registration.clientSecret ??
			this.secrets.make('clientSecret', randomBytes(30).toString('base64url'));
		if (typeof clientSecret !== 'string' || clientSecret.length < 8) {
			throw new Error('clientSecret must be a string of at least 8 characters.');
		}
		if (registration.clientSecret !== undefined) this.secrets.note('clientSecret', clientSecret);
		const scope = registration.scope ?? DEFAULT_SCOPE;
		if (typeof scope !== 'string' || !scope.endsWith(SCOPE_SUFFIX)) {
			throw new Error(`scope must end with '${SCOPE_SUFFIX}'.`);
		}
		const latestExpiry = new Date(now);
		latestExpiry.setUTCMonth(latestExpiry.getUTCMonth() + API_KEY_MAX_LIFETIME_MONTHS);
		const keyExpiresAt = registration.keyExpiresAt ?? latestExpiry;
		if (!(keyExpiresAt instanceof Date) || Number.isNaN(keyExpiresAt.getTime())) {
			throw new Error('keyExpiresAt must be a valid date.');
		}
		if (keyExpiresAt.getTime() > latestExpiry.getTime()) {
			throw new Error(
				`An API key expires at most ${API_KEY_MAX_LIFETIME_MONTHS} months after creation (${toServiceTimestamp(latestExpiry)}); got ${toServiceTimestamp(keyExpiresAt)}.`,
			);
		}
		if (keyExpiresAt.getTime() <= now.getTime()) {
			throw new Error(
				`keyExpiresAt must be in the future; got ${toServiceTimestamp(keyExpiresAt)}.`,
			);
		}
		const stored: StoredClient = {
			clientId,
			secretHash: hashSecret(clientSecret),
			scope,
			environment: registration.environment,
			keyExpiresAt: new Date(keyExpiresAt),
			createdAt: now,
			displayName: registration.displayName ?? `Simulator ${registration.environment} key`,
		};
		this.clients.set(clientId, stored);
		return toRecord(stored, clientSecret);
	}

	/** A new secret for the key (random unless given); returns the record with it. */
	rotateSecret(clientId: string, newSecret?: string): ClientRecord {
		const stored = this.clients.get(clientId);
		if (!stored) throw new Error(`Client ID '${clientId}' is not registered.`);
		const clientSecret =
			newSecret ?? this.secrets.make('clientSecret', randomBytes(30).toString('base64url'));
		if (typeof clientSecret !== 'string' || clientSecret.length < 8) {
			throw new Error('clientSecret must be a string of at least 8 characters.');
		}
		if (newSecret !== undefined) this.secrets.note('clientSecret', clientSecret);
		stored.secretHash = hashSecret(clientSecret);
		return toRecord(stored, clientSecret);
	}

	get(clientId: string): StoredClient | undefined {
		return this.clients.get(clientId);
	}

	/** Deletes the key, as its owner does in the identity portal; false when there is none. */
	delete(clientId: string): boolean {
		return this.clients.delete(clientId);
	}

	/** Whether the key exists and has not expired: only then do its tokens and subscriptions work. */
	isLive(clientId: string, nowMs: number): boolean {
		const client = this.clients.get(clientId);
		return client !== undefined && !this.isKeyExpired(client, nowMs);
	}

	authenticate(clientId: string, clientSecret: string): ClientCheck {
		const client = this.clients.get(clientId);
		if (!client) return { ok: false, reason: 'unknown_client' };
		if (!timingSafeEqual(client.secretHash, hashSecret(clientSecret))) {
			return { ok: false, reason: 'wrong_secret' };
		}
		return { ok: true, client };
	}

	isKeyExpired(client: StoredClient, nowMs: number): boolean {
		return nowMs >= client.keyExpiresAt.getTime();
	}
}

interface TokenRecord {
	clientId: string;
	environment: Environment;
	expiresAtMs: number;
}

export type TokenCheck =
	| { ok: true; clientId: string; environment: Environment }
	| {
			ok: false;
			reason:
				| 'unknown_token'
				| 'expired_token'
				| 'key_deleted'
				| 'key_expired'
				| 'wrong_environment';
			clientId: string | null;
			message: string;
	  };

export class TokenStore {
	private tokens = new Map<string, TokenRecord>();
	private issuedCount = 0;

	constructor(
		private readonly clock: SimulatorClock,
		private readonly clients: ClientRegistry,
		private readonly secrets = new SecretRecord(),
	) {}

	get issued(): number {
		return this.issuedCount;
	}

	issue(client: { clientId: string; environment: Environment }): {
		accessToken: string;
		expiresIn: number;
	} {
		const nowMs = this.clock.nowMs();
		if (this.tokens.size > 10_000) this.prune(nowMs);
		const accessToken = this.secrets.make('token', randomBytes(32).toString('base64url'));
		this.tokens.set(accessToken, {
			clientId: client.clientId,
			environment: client.environment,
			expiresAtMs: nowMs + ACCESS_TOKEN_LIFETIME_SECONDS * 1000,
		});
		this.issuedCount++;
		return { accessToken, expiresIn: ACCESS_TOKEN_LIFETIME_SECONDS };
	}

	check(accessToken: string, environment: Environment): TokenCheck {
		const record = this.tokens.get(accessToken);
		if (!record) {
			return {
				ok: false,
				reason: 'unknown_token',
				clientId: null,
				message: 'The access token is not valid. Request a new token from the identity service.',
			};
		}
		const nowMs = this.clock.nowMs();
		if (nowMs >= record.expiresAtMs) {
			return {
				ok: false,
				reason: 'expired_token',
				clientId: record.clientId,
				message: `The access token expired at ${toServiceTimestamp(new Date(record.expiresAtMs))}. Request a new token from the identity service.`,
			};
		}
		const client = this.clients.get(record.clientId);
		if (!client) {
			return {
				ok: false,
				reason: 'key_deleted',
				clientId: record.clientId,
				message:
					'The API key of this access token was deleted. Use another API key of the identity portal.',
			};
		}
		if (this.clients.isKeyExpired(client, nowMs)) {
			return {
				ok: false,
				reason: 'key_expired',
				clientId: record.clientId,
				message: `The API key of this access token expired on ${formatExpiry(client.keyExpiresAt)}. Create a new API key in the identity portal.`,
			};
		}
		if (record.environment !== environment) {
			return {
				ok: false,
				reason: 'wrong_environment',
				clientId: record.clientId,
				message: `The access token belongs to the ${record.environment} environment and is not accepted by the ${environment} service. Use a ${environment} API key, or the ${record.environment} base URL.`,
			};
		}
		return { ok: true, clientId: record.clientId, environment: record.environment };
	}

	private prune(nowMs: number) {
		for (const [token, record] of this.tokens) {
			if (record.expiresAtMs <= nowMs) this.tokens.delete(token);
		}
	}
}

/** `YYYY-MM-DD` for a midnight expiry, the full service timestamp otherwise. */
export function formatExpiry(date: Date): string {
	const timestamp = toServiceTimestamp(date);
	return timestamp.endsWith('T00:00:00Z') ? timestamp.slice(0, 10) : timestamp;
}

function hashSecret(secret: string): Buffer {
	return createHash('sha256').update(secret, 'utf8').digest();
}

/** The record as JSON (dates as ISO strings), for the control API. */
export function clientJson(record: ClientRecord): ClientRecordJson {
	return {
		...record,
		keyExpiresAt: record.keyExpiresAt.toISOString(),
		createdAt: record.createdAt.toISOString(),
	};
}

function toRecord(stored: StoredClient, clientSecret: string): ClientRecord {
	return {
		clientId: stored.clientId,
		clientSecret,
		scope: stored.scope,
		environment: stored.environment,
		keyExpiresAt: new Date(stored.keyExpiresAt),
		createdAt: new Date(stored.createdAt),
		displayName: stored.displayName,
	};
}
