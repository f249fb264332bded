const DAY_MS = 24 * 60 * 60 * 1000;

export const EXPIRY_WARNING_DAYS = 30;

/** The credential's "API Key Expires On" as the UTC start of that day, or undefined when unset or unreadable. */
export function readApiKeyExpiry(value: unknown): Date | undefined {
	if (typeof value !== 'string') return undefined;
	const day = /^(\d{4})-(\d{2})-(\d{2})/.exec(value.trim());
	if (!day) return undefined;
	return new Date(Date.UTC(Number(day[1]), Number(day[2]) - 1, Number(day[3])));
}

/** The spec says a key stops working on its expiry date, so that whole day counts as expired. */
export function isApiKeyExpired(expiresOn: Date, now = new Date()): boolean {
	return now.getTime() >= expiresOn.getTime();
}

export function daysUntilApiKeyExpiry(expiresOn: Date, now = new Date()): number {
	return Math.ceil((expiresOn.getTime() - now.getTime()) / DAY_MS);
}

export function formatExpiryDate(expiresOn: Date): string {
	return expiresOn.toISOString().slice(0, 10);
}

export function expiredApiKeyMessage(expiresOn?: Date): { message: string; description: string } {
	const when = expiresOn ? ` on ${formatExpiryDate(expiresOn)}` : '';
	return {
		message: `The API key expired${when}`,
		description:
			'An expired API key cannot be revived and its expiry date cannot be extended. Create a replacement key in the identity portal (you need the "Customer Admin" or "API Key Manager" permission), then enter its Client ID, Client Secret and expiry date in this credential.',
	};
}
