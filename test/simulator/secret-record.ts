/**
 * Secret-hygiene support, off unless its environment variables are set:
 *
 * - INVOICING_SIM_SECRET_MARKER=<text>: every client secret and access token the simulator makes
 *   up starts with this marker (client secrets `<marker>cs…`, tokens `<marker>tk…`), so that a scan
 *   of any output finds them by the marker alone.
 * - INVOICING_SIM_SECRET_RECORD_DIR=<folder>: the simulator appends every secret it handles (client
 *   secrets at registration and rotation, tokens at issue, the delivery keys in the notification URLs
 *   of created subscriptions) to `<folder>/simulator-<id>.secrets` (`<kind>\t<value>` lines), and on
 *   close writes its request log and delivery attempts to `<folder>/simulator-<id>.log.json`. A
 *   scanner then looks for those exact values elsewhere. Keys made by the trigger carry no marker;
 *   this record is how a scan knows them.
 *
 * Both are meant for throw-away test secrets in a temporary folder, never for real ones.
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync, join, mkdirSync, process, writeFileSync } from '../tools/node-apis';

export const SECRET_MARKER_ENV = 'INVOICING_SIM_SECRET_MARKER';
export const SECRET_RECORD_DIR_ENV = 'INVOICING_SIM_SECRET_RECORD_DIR';

export type SecretKind = 'clientSecret' | 'token' | 'deliveryKey';

const MARKER_TAGS: Partial<Record<SecretKind, string>> = { clientSecret: 'cs', token: 'tk' };

export class SecretRecord {
	private readonly base?: string;
	private readonly seen = new Map<string, SecretKind>();

	constructor(
		private readonly marker = process.env[SECRET_MARKER_ENV] ?? '',
		recordDir = process.env[SECRET_RECORD_DIR_ENV] ?? '',
	) {
		if (recordDir) {
			mkdirSync(recordDir, { recursive: true });
			this.base = join(
				recordDir,
				`simulator-${process.pid}-${Date.now()}-${randomBytes(3).toString('hex')}`,
			);
		}
	}

	/** A new random secret of this kind, with the marker in front when one is set. */
	make(kind: SecretKind, random: string): string {
		const value = this.marker ? `${this.marker}${MARKER_TAGS[kind] ?? ''}${random}` : random;
		this.note(kind, value);
		return value;
	}

	/** Records a secret given from outside (an explicit client secret, a delivery key). */
	note(kind: SecretKind, value: string | null | undefined) {
		if (!value) return;
		this.seen.set(value, kind);
		if (!this.base) return;
		appendFileSync(`${this.base}.secrets`, `${kind}\t${value.replace(/[\t\n]/g, ' ')}\n`);
	}

	/** Every secret made or noted so far, with its kind, for "appears nowhere" checks. */
	all(): ReadonlyMap<string, SecretKind> {
		return this.seen;
	}

	/** Writes what the simulator logged, for the scanner. */
	saveLogs(logs: Record<string, unknown>) {
		if (!this.base) return;
		writeFileSync(`${this.base}.log.json`, JSON.stringify(logs));
	}
}
