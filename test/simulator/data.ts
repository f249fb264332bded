/**
 * The simulator's invoices and managed assets, generated deterministically from a seed.
 *
 * Choices where the contract is silent:
 * - Seeded records are dated 2024-01-01 to 2025-12-31 whatever the real date, so a seed always
 *   gives the same data. Invoices issued later (`issue`) carry the simulated time.
 * - Invoice numbers are `INV-` plus 7 digits, in issue-date order; asset ids are `AST-` plus 6
 *   digits; customer numbers are `CUST-` plus 5 digits. Lists are sorted by these ids.
 * - `totalAmount` includes tax; `taxAmount` is null for tax-exempt (USD) customers.
 * - An invoice line bills one asset of the invoice's own customer, or none (`assetId: null`,
 *   a service fee). A cancelled invoice has no `dueDate`.
 * - Records are frozen: readers get the stored objects and cannot change them. A change (an
 *   invoice marked overdue, paid, cancelled or edited, an asset updated or retired) replaces the
 *   record with a new one whose `updatedAt` is the simulated time of the change, to the second:
 *   two changes within one second carry the same `updatedAt` (the contract's one-second
 *   resolution). A record in a final state (paid, cancelled, retired) may still be edited.
 * - updatedFrom/updatedTo bound `updatedAt` inclusively. Lists are in id order unless a test asks
 *   for another (`ListShape.order`: no order is part of the contract); new invoices come last.
 * - A listing lag (`setListingLag`, a test switch within the contract's 5-minute bound) lists a
 *   change only some time after it was made: until then lists show the record's version before
 *   it (a new invoice not at all), as a service whose lists are fed by replication does.
 */
import {
	ASSET_STATUSES,
	INVOICE_STATUSES,
	toServiceTimestamp,
	type Asset,
	type AssetFilters,
	type AssetStatus,
	type Invoice,
	type InvoiceFilters,
	type InvoiceLine,
	type InvoiceStatus,
	type Page,
} from './contract';
import { createRandom, type Random } from './random';
import type { IssueInvoiceInput, ListOrder } from './types';

/** Every field of the contract's records; the compiler checks that none is missing. */
export const INVOICE_FIELDS = Object.keys({
	invoiceNumber: true,
	customerNumber: true,
	issueDate: true,
	dueDate: true,
	status: true,
	currency: true,
	totalAmount: true,
	taxAmount: true,
	updatedAt: true,
	lines: true,
} satisfies Record<keyof Invoice, true>) as Array<keyof Invoice>;

export const INVOICE_LINE_FIELDS = Object.keys({
	description: true,
	quantity: true,
	unitPrice: true,
	amount: true,
	assetId: true,
} satisfies Record<keyof InvoiceLine, true>) as Array<keyof InvoiceLine>;

export const ASSET_FIELDS = Object.keys({
	assetId: true,
	serialNumber: true,
	type: true,
	model: true,
	site: true,
	customerNumber: true,
	status: true,
	contractEnd: true,
	updatedAt: true,
} satisfies Record<keyof Asset, true>) as Array<keyof Asset>;

export interface SeedOptions {
	invoices?: number;
	assets?: number;
	/** The PRNG seed; the same seed and counts always give the same records. */
	seed?: number | string;
}

export const DEFAULT_INVOICE_COUNT = 1050;
export const DEFAULT_ASSET_COUNT = 300;
export const DEFAULT_SEED = 20240101;
export const MAX_SEED_COUNT = 1_000_000;

const DAY_MS = 24 * 60 * 60 * 1000;
const SEED_FROM = Date.UTC(2024, 0, 1);
const SEED_TO = Date.UTC(2025, 11, 31, 23, 59, 59);
const PAYMENT_TERMS_DAYS = 30;

const ASSET_MODELS: Record<string, string[]> = {
	router: ['ISR 4331', 'MX204', 'EdgeRouter 12'],
	switch: ['Catalyst 9300', 'EX2300-48P', 'Aruba 6300M'],
	firewall: ['PA-440', 'FortiGate 60F', 'SRX345'],
	'access-point': ['AP-515', 'MR46', 'U6 Enterprise'],
	server: ['PowerEdge R650', 'ProLiant DL360', 'ThinkSystem SR630'],
	ups: ['Smart-UPS 3000', 'Eaton 9PX'],
	printer: ['LaserJet M612', 'imageRUNNER C3226'],
};
const ASSET_TYPES = Object.keys(ASSET_MODELS);
const SITES = [
	'Berlin HQ',
	'Munich DC-2',
	'Hamburg Branch',
	'Vienna Office',
	'Zurich Lab',
	'London Docklands',
	'Austin Campus',
];
const CURRENCIES: Array<{ currency: string; taxRate: number | null }> = [
	{ currency: 'EUR', taxRate: 0.19 },
	{ currency: 'EUR', taxRate: 0.19 },
	{ currency: 'EUR', taxRate: 0.2 },
	{ currency: 'GBP', taxRate: 0.2 },
	{ currency: 'USD', taxRate: null },
];

interface Customer {
	customerNumber: string;
	currency: string;
	taxRate: number | null;
}

export class DataStore {
	private invoiceList: Invoice[] = [];
	private assetList: Asset[] = [];
	private invoiceIndex = new Map<string, Invoice>();
	private assetIndex = new Map<string, Asset>();
	private customers: Customer[] = [];
	private customerIndex = new Map<string, Customer>();
	private assetsByCustomer = new Map<string, Asset[]>();
	private liveRandom: Random = createRandom(0);
	private lastInvoiceSerial = 0;
	private seedUsed: number | string = DEFAULT_SEED;
	private deviations = new WeakMap<object, string>();
	/** When a version of a record is listed (simulated epoch ms), and the version it replaced. */
	private listedFrom = new WeakMap<object, number>();
	private replacedVersion = new WeakMap<object, object>();
	private listingLag: ((record: Invoice | Asset) => number) | undefined;
	/** Whether any version was listed late: the lists then look for the version listed by now. */
	private listedLate = false;

	constructor(options: SeedOptions = {}) {
		this.seed(options);
	}

	get invoices(): readonly Invoice[] {
		return this.invoiceList;
	}

	get assets(): readonly Asset[] {
		return this.assetList;
	}

	get customerNumbers(): string[] {
		return this.customers.map((customer) => customer.customerNumber);
	}

	get currentSeed(): number | string {
		return this.seedUsed;
	}

	invoice(invoiceNumber: string): Invoice | undefined {
		return this.invoiceIndex.get(invoiceNumber);
	}

	asset(assetId: string): Asset | undefined {
		return this.assetIndex.get(assetId);
	}

	/**
	 * Removes the asset as if the provider had deleted it: its get answers 404 and lists leave it
	 * out. Invoices that bill it keep their lines. False when there was no such asset.
	 */
	deleteAsset(assetId: string): boolean {
		const asset = this.assetIndex.get(assetId);
		if (!asset) return false;
		this.assetIndex.delete(assetId);
		this.assetList = this.assetList.filter((entry) => entry !== asset);
		const ofCustomer = this.assetsByCustomer.get(asset.customerNumber) ?? [];
		const remaining = ofCustomer.filter((entry) => entry !== asset);
		if (remaining.length > 0) this.assetsByCustomer.set(asset.customerNumber, remaining);
		else this.assetsByCustomer.delete(asset.customerNumber);
		return true;
	}

	/** Replaces every record with freshly generated ones. */
	seed(options: SeedOptions = {}): { invoices: number; assets: number; seed: number | string } {
		const invoiceCount = checkCount('invoices', options.invoices ?? DEFAULT_INVOICE_COUNT);
		const assetCount = checkCount('assets', options.assets ?? DEFAULT_ASSET_COUNT);
		const seed = options.seed ?? DEFAULT_SEED;
		const random = createRandom(`${seed}`);
		this.seedUsed = seed;
		this.liveRandom = createRandom(`${seed}:live`);

		const customerCount = Math.max(1, Math.ceil(assetCount / 5), Math.ceil(invoiceCount / 25));
		this.customers = [];
		for (let i = 0; i < customerCount; i++) {
			const { currency, taxRate } = random.pick(CURRENCIES);
			this.customers.push({ customerNumber: `CUST-${pad(10001 + i, 5)}`, currency, taxRate });
		}
		this.customerIndex = new Map(this.customers.map((c) => [c.customerNumber, c]));

		this.assetList = [];
		this.assetsByCustomer = new Map();
		for (let i = 0; i < assetCount; i++) {
			const asset = generateAsset(random, `AST-${pad(i + 1, 6)}`, random.pick(this.customers));
			this.assetList.push(asset);
			this.addCustomerAsset(asset);
		}
		this.assetIndex = new Map(this.assetList.map((asset) => [asset.assetId, asset]));

		const issueTimes: number[] = [];
		for (let i = 0; i < invoiceCount; i++) issueTimes.push(random.int(SEED_FROM, SEED_TO));
		issueTimes.sort((a, b) => a - b);
		this.invoiceList = [];
		const recentFrom = Math.floor(invoiceCount * 0.92);
		issueTimes.forEach((issuedAt, i) => {
			const customer = random.pick(this.customers);
			const status = seededStatus(random, i >= recentFrom);
			const invoice = this.buildInvoice(random, {
				invoiceNumber: invoiceNumberOf(i + 1),
				customer,
				issuedAt,
				status,
			});
			this.invoiceList.push(invoice);
		});
		this.lastInvoiceSerial = invoiceCount;
		this.invoiceIndex = new Map(
			this.invoiceList.map((invoice) => [invoice.invoiceNumber, invoice]),
		);
		return { invoices: invoiceCount, assets: assetCount, seed };
	}

	/**
	 * Replaces every record with the given ones, as they are (e.g. what a service held when a
	 * trigger's state was captured); invoices issued later take the next number after theirs.
	 */
	load(records: { invoices: readonly Invoice[]; assets: readonly Asset[] }) {
		this.assetList = records.assets.map((asset) => deepFreeze(structuredClone(asset)));
		this.assetIndex = new Map(this.assetList.map((asset) => [asset.assetId, asset]));
		this.invoiceList = records.invoices
			.map((invoice) => deepFreeze(structuredClone(invoice)))
			.sort((a, b) => (a.invoiceNumber < b.invoiceNumber ? -1 : 1));
		this.invoiceIndex = new Map(
			this.invoiceList.map((invoice) => [invoice.invoiceNumber, invoice]),
		);
		const customers = new Map<string, Customer>();
		for (const { customerNumber, currency, totalAmount, taxAmount } of this.invoiceList) {
			if (customers.has(customerNumber)) continue;
			const taxRate = taxAmount === null ? null : round2(taxAmount / (totalAmount - taxAmount));
			customers.set(customerNumber, { customerNumber, currency, taxRate });
		}
		for (const { customerNumber } of this.assetList) {
			if (!customers.has(customerNumber)) {
				customers.set(customerNumber, { customerNumber, currency: 'EUR', taxRate: 0.19 });
			}
		}
		this.customers = [...customers.values()];
		this.customerIndex = customers;
		this.assetsByCustomer = new Map();
		for (const asset of this.assetList) this.addCustomerAsset(asset);
		const serials = this.invoiceList.map(({ invoiceNumber }) => Number(/\d+$/.exec(invoiceNumber)));
		this.lastInvoiceSerial = Math.max(0, ...serials.filter(Number.isFinite));
		this.listedFrom = new WeakMap();
		this.replacedVersion = new WeakMap();
		this.listedLate = false;
	}

	/**
	 * A new invoice, issued at `now`: the next invoice number, status `issued`, lines billing
	 * assets of its customer. Fields in `input` override the generated ones.
	 */
	issue(now: Date, input: IssueInvoiceInput = {}): Invoice {
		const random = this.liveRandom;
		const invoiceNumber = input.invoiceNumber ?? invoiceNumberOf(this.lastInvoiceSerial + 1);
		if (this.invoiceIndex.has(invoiceNumber)) {
			throw new Error(`Invoice '${invoiceNumber}' already exists.`);
		}
		const customer = input.customerNumber
			? (this.customerIndex.get(input.customerNumber) ?? {
					customerNumber: input.customerNumber,
					currency: 'EUR',
					taxRate: 0.19,
				})
			: this.pickCustomerWithAssets(random);
		const generated = this.buildInvoice(random, {
			invoiceNumber,
			customer,
			issuedAt: now.getTime(),
			status: 'issued',
			lines: input.lines,
		});
		if (input.status !== undefined && !isInvoiceStatus(input.status)) {
			throw new Error(`Invoice status must be one of ${INVOICE_STATUSES.join(', ')}.`);
		}
		const overrides = Object.fromEntries(
			Object.entries(input).filter(([key, value]) => key !== 'lines' && value !== undefined),
		);
		const invoice = deepFreeze({
			...generated,
			...overrides,
			invoiceNumber,
			lines: generated.lines,
		});
		if (input.invoiceNumber === undefined) this.lastInvoiceSerial++;
		this.noteVersion(invoice, undefined, now);
		this.insertSorted(invoice);
		return invoice;
	}

	/** Marks a record as breaking the contract on purpose (e.g. an invoice number outside its pattern). */
	markDeviation(record: Invoice | Asset, reason: string) {
		this.deviations.set(record, reason);
	}

	/** A record marked as breaking the contract stays marked through its later changes. */
	private carryDeviation(previous: object, changed: object) {
		const reason = this.deviations.get(previous);
		if (reason !== undefined && !this.deviations.has(changed)) this.deviations.set(changed, reason);
	}

	/** Why a record breaks the contract on purpose; undefined for a record that keeps it. */
	deviationOf(record: unknown): string | undefined {
		return typeof record === 'object' && record !== null ? this.deviations.get(record) : undefined;
	}

	/** How long after a change (ms) the lists show it; undefined: at once. */
	setListingLag(lag: ((record: Invoice | Asset) => number) | undefined) {
		this.listingLag = lag;
	}

	/** Records a new version of a record made at `now`, and when the lists show it. */
	private noteVersion(
		changed: Invoice | Asset,
		previous: object | undefined,
		now: Date | undefined,
	) {
		if (previous) this.replacedVersion.set(changed, previous);
		const lag = now === undefined ? 0 : (this.listingLag?.(changed) ?? 0);
		if (lag > 0) {
			this.listedFrom.set(changed, (now as Date).getTime() + lag);
			this.listedLate = true;
		}
	}

	/** The records as lists show them at `nowMs`: the newest version of each listed by then. */
	private listedVersions<T extends object>(
		records: readonly T[],
		nowMs: number | undefined,
	): readonly T[] {
		if (nowMs === undefined || !this.listedLate) return records;
		const listed: T[] = [];
		for (const record of records) {
			let version: T | undefined = record;
			while (version && (this.listedFrom.get(version) ?? 0) > nowMs) {
				version = this.replacedVersion.get(version) as T | undefined;
			}
			if (version) listed.push(version);
		}
		return listed;
	}

	listInvoices(
		filters: InvoiceFilters,
		page: number,
		pageSize: number,
		order: ListOrder = 'id',
		nowMs?: number,
	): Page<Invoice> {
		const matches = (invoice: Invoice) =>
			(filters.status === undefined || invoice.status === filters.status) &&
			(filters.customerNumber === undefined || invoice.customerNumber === filters.customerNumber) &&
			(filters.issuedFrom === undefined || invoice.issueDate >= filters.issuedFrom) &&
			(filters.issuedTo === undefined || invoice.issueDate <= filters.issuedTo) &&
			isUpdatedWithin(invoice, filters);
		return paginate(
			this.listedVersions(this.invoiceList, nowMs),
			Object.keys(filters).length > 0 ? matches : undefined,
			page,
			pageSize,
			order,
		);
	}

	listAssets(
		filters: AssetFilters,
		page: number,
		pageSize: number,
		order: ListOrder = 'id',
		nowMs?: number,
	): Page<Asset> {
		const matches = (asset: Asset) =>
			(filters.status === undefined || asset.status === filters.status) &&
			(filters.type === undefined || asset.type === filters.type) &&
			(filters.site === undefined || asset.site === filters.site) &&
			(filters.customerNumber === undefined || asset.customerNumber === filters.customerNumber) &&
			(filters.serialNumber === undefined || asset.serialNumber === filters.serialNumber) &&
			isUpdatedWithin(asset, filters);
		return paginate(
			this.listedVersions(this.assetList, nowMs),
			Object.keys(filters).length > 0 ? matches : undefined,
			page,
			pageSize,
			order,
		);
	}

	/**
	 * Marks an issued invoice overdue, whatever its due date: when an invoice becomes overdue is
	 * the service's business (the contract says only that its status and `updatedAt` change).
	 */
	markInvoiceOverdue(invoiceNumber: string, now: Date): Invoice {
		return this.changeInvoice(invoiceNumber, now, 'overdue', (invoice) => ({ ...invoice }));
	}

	/** Marks an issued or overdue invoice paid. */
	payInvoice(invoiceNumber: string, now: Date): Invoice {
		return this.changeInvoice(invoiceNumber, now, 'paid', (invoice) => ({ ...invoice }));
	}

	/** Cancels an issued or overdue invoice; a cancelled invoice has no due date. */
	cancelInvoice(invoiceNumber: string, now: Date): Invoice {
		return this.changeInvoice(invoiceNumber, now, 'cancelled', (invoice) => ({
			...invoice,
			dueDate: null,
		}));
	}

	/**
	 * Edits an invoice in any status, a correction that leaves its status as it is: the given
	 * fields, else its due date moves a week on (its total rises by 1 when it has no due date).
	 */
	editInvoice(invoiceNumber: string, now: Date, edits: InvoiceEdits = {}): Invoice {
		const invoice = this.invoiceIndex.get(invoiceNumber);
		if (!invoice) throw new Error(`Invoice '${invoiceNumber}' was not found.`);
		const given = Object.fromEntries(
			Object.entries(edits).filter(([, value]) => value !== undefined),
		);
		const correction =
			Object.keys(given).length > 0
				? given
				: invoice.dueDate !== null
					? { dueDate: toServiceTimestamp(new Date(Date.parse(invoice.dueDate) + 7 * DAY_MS)) }
					: { totalAmount: round2(invoice.totalAmount + 1) };
		return this.replaceInvoice({ ...invoice, ...correction }, now);
	}

	/**
	 * Gives a record another `updatedAt`, as it is (a test's untrustworthy stamp: in the future, in
	 * the past, or in another form); nothing else changes. Lists filter it by the moment it means,
	 * or as text when it means none.
	 */
	restamp(kind: 'invoice' | 'asset', id: string, updatedAt: string): Invoice | Asset {
		if (kind === 'invoice') {
			const invoice = this.invoiceIndex.get(id);
			if (!invoice) throw new Error(`Invoice '${id}' was not found.`);
			return this.replaceInvoice({ ...invoice, updatedAt }, undefined);
		}
		return this.replaceAsset({ ...this.requireAsset(id), updatedAt }, undefined);
	}

	/**
	 * Changes an asset: the given fields, else it moves to the next site. The status of an asset
	 * that is not retired may become active or inactive here (retiring is `retireAsset`); a retired
	 * asset may be edited but keeps its status.
	 */
	updateAsset(assetId: string, now: Date, changes: AssetChanges = {}): Asset {
		const asset = this.requireAsset(assetId);
		if (asset.status === 'retired' && changes.status !== undefined) {
			throw new Error(`Asset '${assetId}' is retired; an edit keeps that status.`);
		}
		if (changes.status !== undefined && !['active', 'inactive'].includes(changes.status)) {
			throw new Error('An update sets the status to active or inactive; retire with retire.');
		}
		const given = Object.fromEntries(
			Object.entries(changes).filter(([, value]) => value !== undefined),
		);
		const nextSite = SITES[(SITES.indexOf(asset.site ?? '') + 1) % SITES.length];
		const site = Object.keys(given).length === 0 ? { site: nextSite } : {};
		return this.replaceAsset({ ...asset, ...site, ...given }, now);
	}

	/** Retires an asset that is not retired yet. */
	retireAsset(assetId: string, now: Date): Asset {
		const asset = this.requireAsset(assetId);
		if (asset.status === 'retired') throw new Error(`Asset '${assetId}' is already retired.`);
		return this.replaceAsset({ ...asset, status: 'retired' }, now);
	}

	private changeInvoice(
		invoiceNumber: string,
		now: Date,
		status: 'paid' | 'cancelled' | 'overdue',
		change: (invoice: Invoice) => Invoice,
	): Invoice {
		const invoice = this.invoiceIndex.get(invoiceNumber);
		if (!invoice) throw new Error(`Invoice '${invoiceNumber}' was not found.`);
		const from = status === 'overdue' ? ['issued'] : ['issued', 'overdue'];
		if (!from.includes(invoice.status)) {
			throw new Error(
				`Invoice '${invoiceNumber}' is ${invoice.status}; only an ${from.join(' or ')} invoice can become ${status}.`,
			);
		}
		return this.replaceInvoice({ ...change(invoice), status }, now);
	}

	/** Stores a changed invoice, stamped `now` (as it is when `now` is undefined). */
	private replaceInvoice(invoice: Invoice, now: Date | undefined): Invoice {
		const previous = this.invoiceIndex.get(invoice.invoiceNumber) as Invoice;
		const changed = deepFreeze(
			now === undefined ? invoice : { ...invoice, updatedAt: toServiceTimestamp(now) },
		);
		this.invoiceList[this.invoiceList.indexOf(previous)] = changed;
		this.invoiceIndex.set(invoice.invoiceNumber, changed);
		this.noteVersion(changed, previous, now);
		this.carryDeviation(previous, changed);
		return changed;
	}

	private requireAsset(assetId: string): Asset {
		const asset = this.assetIndex.get(assetId);
		if (!asset) throw new Error(`Asset '${assetId}' was not found.`);
		return asset;
	}

	/** Stores a changed asset, stamped `now` (as it is when `now` is undefined). */
	private replaceAsset(asset: Asset, now: Date | undefined): Asset {
		const previous = this.requireAsset(asset.assetId);
		const changed = deepFreeze(
			now === undefined ? asset : { ...asset, updatedAt: toServiceTimestamp(now) },
		);
		this.assetList[this.assetList.indexOf(previous)] = changed;
		this.assetIndex.set(asset.assetId, changed);
		this.noteVersion(changed, previous, now);
		this.carryDeviation(previous, changed);
		const owned = this.assetsByCustomer.get(asset.customerNumber) ?? [];
		const at = owned.indexOf(previous);
		if (at !== -1) owned[at] = changed;
		return changed;
	}

	private pickCustomerWithAssets(random: Random): Customer {
		const withAssets = this.customers.filter((c) => this.assetsByCustomer.has(c.customerNumber));
		return random.pick(withAssets.length > 0 ? withAssets : this.customers);
	}

	private addCustomerAsset(asset: Asset) {
		const list = this.assetsByCustomer.get(asset.customerNumber);
		if (list) list.push(asset);
		else this.assetsByCustomer.set(asset.customerNumber, [asset]);
	}

	private insertSorted(invoice: Invoice) {
		const list = this.invoiceList;
		let low = 0;
		let high = list.length;
		while (low < high) {
			const mid = (low + high) >>> 1;
			if (list[mid].invoiceNumber < invoice.invoiceNumber) low = mid + 1;
			else high = mid;
		}
		list.splice(low, 0, invoice);
		this.invoiceIndex.set(invoice.invoiceNumber, invoice);
	}

	private buildInvoice(
		random: Random,
		spec: {
			invoiceNumber: string;
			customer: Customer;
			issuedAt: number;
			status: InvoiceStatus;
			lines?: Array<Partial<InvoiceLine>>;
		},
	): Invoice {
		const { customer, issuedAt, status } = spec;
		const assets = this.assetsByCustomer.get(customer.customerNumber) ?? [];
		const lines = spec.lines
			? spec.lines.map((line) => completeLine(random, line))
			: Array.from({ length: random.int(1, 4) }, () => generateLine(random, assets));
		const subtotal = round2(lines.reduce((sum, line) => sum + line.amount, 0));
		const taxAmount = customer.taxRate === null ? null : round2(subtotal * customer.taxRate);
		const paidAfterDays = random.int(1, 40);
		return deepFreeze({
			invoiceNumber: spec.invoiceNumber,
			customerNumber: customer.customerNumber,
			issueDate: toServiceTimestamp(new Date(issuedAt)),
			dueDate:
				status === 'cancelled'
					? null
					: toServiceTimestamp(new Date(issuedAt + PAYMENT_TERMS_DAYS * DAY_MS)),
			status,
			currency: customer.currency,
			totalAmount: round2(subtotal + (taxAmount ?? 0)),
			taxAmount,
			updatedAt: toServiceTimestamp(
				new Date(status === 'paid' ? issuedAt + paidAfterDays * DAY_MS : issuedAt),
			),
			lines,
		});
	}
}

/** The fields `editInvoice` may change. */
export type InvoiceEdits = Partial<Pick<Invoice, 'dueDate' | 'totalAmount' | 'taxAmount'>>;

/** The fields `updateAsset` may change. */
export type AssetChanges = Partial<
	Pick<Asset, 'site' | 'model' | 'serialNumber' | 'contractEnd'>
> & {
	status?: 'active' | 'inactive';
};

function isUpdatedWithin(
	record: { updatedAt: string },
	filters: { updatedFrom?: string; updatedTo?: string },
): boolean {
	return (
		(filters.updatedFrom === undefined ||
			compareStamps(record.updatedAt, filters.updatedFrom) >= 0) &&
		(filters.updatedTo === undefined || compareStamps(record.updatedAt, filters.updatedTo) <= 0)
	);
}

/** Two stamps by the moment they mean; as text when one is no time (a test's broken stamp). */
function compareStamps(a: string, b: string): number {
	const [first, second] = [momentOf(a), momentOf(b)];
	if (first !== null && second !== null) return first - second;
	return a < b ? -1 : a > b ? 1 : 0;
}

/** Each stamp parsed once (null: no time): every list request compares every record's. */
const moments = new Map<string, number | null>();

function momentOf(stamp: string): number | null {
	let moment = moments.get(stamp);
	if (moment === undefined) {
		const parsed = Date.parse(stamp);
		moment = Number.isNaN(parsed) ? null : parsed;
		moments.set(stamp, moment);
	}
	return moment;
}

function generateAsset(random: Random, assetId: string, customer: Customer): Asset {
	const type = random.pick(ASSET_TYPES);
	const status = weighted<AssetStatus>(random, [
		['active', 0.75],
		['inactive', 0.15],
		['retired', 0.1],
	]);
	const contractEnd = random.chance(0.08)
		? null
		: status === 'retired'
			? dateBetween(random, Date.UTC(2023, 0, 1), Date.UTC(2025, 11, 31))
			: dateBetween(random, Date.UTC(2026, 0, 1), Date.UTC(2029, 11, 31));
	return deepFreeze({
		assetId,
		serialNumber: random.chance(0.04) ? null : `SN${serial(random, 10)}`,
		type,
		model: random.chance(0.06) ? null : random.pick(ASSET_MODELS[type]),
		site: random.chance(0.05) ? null : random.pick(SITES),
		customerNumber: customer.customerNumber,
		status,
		contractEnd,
		updatedAt: toServiceTimestamp(new Date(random.int(SEED_FROM, SEED_TO))),
	});
}

function generateLine(random: Random, assets: Asset[]): InvoiceLine {
	const asset = assets.length > 0 && !random.chance(0.12) ? random.pick(assets) : null;
	const quantity = random.int(1, 12);
	const unitPrice = random.int(1500, 50000) / 100;
	const description = asset
		? `Managed ${asset.type}${asset.model ? ` ${asset.model}` : ''} (${asset.assetId})`
		: random.chance(0.3)
			? null
			: 'Service fee';
	return {
		description,
		quantity,
		unitPrice,
		amount: round2(quantity * unitPrice),
		assetId: asset?.assetId ?? null,
	};
}

function completeLine(random: Random, line: Partial<InvoiceLine>): InvoiceLine {
	const quantity = line.quantity ?? 1;
	const unitPrice = line.unitPrice ?? random.int(1500, 50000) / 100;
	return {
		description: line.description ?? null,
		quantity,
		unitPrice,
		amount: line.amount ?? round2(quantity * unitPrice),
		assetId: line.assetId ?? null,
	};
}

function seededStatus(random: Random, recent: boolean): InvoiceStatus {
	if (random.chance(0.04)) return 'cancelled';
	if (recent) return random.chance(0.5) ? 'paid' : 'issued';
	return random.chance(0.88) ? 'paid' : 'overdue';
}

function paginate<T extends { updatedAt: string }>(
	list: readonly T[],
	matches: ((item: T) => boolean) | undefined,
	page: number,
	pageSize: number,
	order: ListOrder,
): Page<T> {
	const filtered = matches ? list.filter(matches) : list;
	const selected =
		order === 'id'
			? filtered
			: filtered
					.map((item, index) => ({ item, index }))
					.sort(
						(a, b) =>
							compareStamps(a.item.updatedAt, b.item.updatedAt) *
								(order === 'updatedAt' ? 1 : -1) || a.index - b.index,
					)
					.map(({ item }) => item);
	const start = (page - 1) * pageSize;
	return {
		items: selected.slice(start, start + pageSize),
		page,
		pageSize,
		totalItems: selected.length,
	};
}

function weighted<T>(random: Random, options: Array<[T, number]>): T {
	let roll = random.next();
	for (const [value, weight] of options) {
		if (roll < weight) return value;
		roll -= weight;
	}
	return options[options.length - 1][0];
}

function dateBetween(random: Random, from: number, to: number): string {
	const day = Math.floor(random.int(from, to) / DAY_MS) * DAY_MS;
	return toServiceTimestamp(new Date(day));
}

function serial(random: Random, length: number): string {
	const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ0123456789';
	let text = '';
	for (let i = 0; i < length; i++) text += alphabet[random.int(0, alphabet.length - 1)];
	return text;
}

function invoiceNumberOf(serialNumber: number): string {
	return `INV-${pad(serialNumber, 7)}`;
}

function pad(value: number, width: number): string {
	return String(value).padStart(width, '0');
}

function round2(value: number): number {
	return Math.round(value * 100) / 100;
}

function checkCount(name: string, value: number): number {
	if (!Number.isInteger(value) || value < 0 || value > MAX_SEED_COUNT) {
		throw new Error(
			`The ${name} count must be an integer from 0 to ${MAX_SEED_COUNT}; got ${value}.`,
		);
	}
	return value;
}

function deepFreeze<T>(value: T): T {
	if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
		Object.freeze(value);
		for (const child of Object.values(value)) deepFreeze(child);
	}
	return value;
}

export const isInvoiceStatus = (value: string): value is InvoiceStatus =>
	(INVOICE_STATUSES as readonly string[]).includes(value);

export const isAssetStatus = (value: string): value is AssetStatus =>
	(ASSET_STATUSES as readonly string[]).includes(value);
