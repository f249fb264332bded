/**
 * The in-memory service (test/simulator/in-memory.ts) keeps the contract's rules the Polling
 * Trigger's in-process tests rest on: inclusive bounds to the second, the page envelope with a
 * total or null, a stable order, changes listed late, its own clock in the Date header, faults
 * with Retry-After, latency in simulated time, and records that move between two page reads.
 */
import { InMemoryService } from '../../simulator/in-memory';
import { VirtualTime } from '../../harness/virtual-time';
import { toServiceTimestamp } from '../../simulator/contract';

const MINUTE = 60_000;

function service(options: ConstructorParameters<typeof InMemoryService>[1] = {}) {
	const time = new VirtualTime();
	return { time, sim: new InMemoryService(time, { invoices: 20, assets: 10, ...options }) };
}

async function list(
	{ time, sim }: ReturnType<typeof service>,
	query: Record<string, string | number>,
	path = '/invoice/v1/invoices',
): Promise<{ status: number; headers: Record<string, string>; body: ListBody }> {
	const search = new URLSearchParams(
		Object.entries(query).map(([name, value]): [string, string] => [name, String(value)]),
	);
	const answer = await time.run(
		async () => await sim.request({ method: 'GET', path, query: search }),
	);
	if ('dropped' in answer) throw new Error('The connection dropped');
	return { ...answer, body: answer.body as ListBody };
}

interface ListBody {
	items: Array<{ invoiceNumber: string }>;
	page: number;
	pageSize: number;
	totalItems: number | null;
	code?: string;
}

const numbers = (body: ListBody) => body.items.map((invoice) => invoice.invoiceNumber);

test('updatedFrom and updatedTo are inclusive, to the second; the envelope counts what matches', async () => {
	const bed = service();
	const at = (offset: number) =>
		toServiceTimestamp(new Date(bed.sim.clock.now().getTime() + offset));
	const second = at(0);
	const a = bed.sim.issueInvoice().invoice.invoiceNumber;
	bed.sim.clock.advance(999 - (bed.sim.clock.now().getTime() % 1000));
	const b = bed.sim.issueInvoice().invoice.invoiceNumber;
	bed.sim.clock.advance(1);
	const c = bed.sim.issueInvoice().invoice.invoiceNumber;
	const { status, body } = await list(bed, {
		updatedFrom: second,
		updatedTo: second,
		pageSize: 100,
	});
	expect(status).toBe(200);
	expect(body).toEqual({ items: expect.any(Array), page: 1, pageSize: 100, totalItems: 2 });
	expect(numbers(body)).toEqual([a, b]);
	expect(numbers((await list(bed, { updatedFrom: at(0) })).body)).toEqual([c]);
});

test('pages of at most 100, by id or by updatedAt; totalItems null when the service does not count', async () => {
	const bed = service({ invoices: 250 });
	expect((await list(bed, { pageSize: 101 })).status).toBe(400);
	const third = await list(bed, { page: 3, pageSize: 100 });
	expect([third.body.items.length, third.body.totalItems]).toEqual([50, 250]);
	const [first] = bed.sim.data.invoices();
	bed.sim.clock.advance(MINUTE);
	bed.sim.editInvoice(first.invoiceNumber);
	expect(numbers((await list(bed, { pageSize: 1 })).body)).toEqual([first.invoiceNumber]);
	bed.sim.setListShape({ order: 'updatedAt', totalItems: 'null' });
	const last = await list(bed, { page: 250, pageSize: 1 });
	expect([numbers(last.body), last.body.totalItems]).toEqual([[first.invoiceNumber], null]);
});

test('a change is listed only after its listing lag, by the service’s clock; the Date header is that clock', async () => {
	const bed = service({ clockOffsetMs: -3 * MINUTE });
	const serviceNow = () => bed.sim.clock.now().getTime();
	expect(serviceNow() - bed.time.now()).toBe(-3 * MINUTE);
	bed.sim.data.setListingLag(() => 4 * MINUTE);
	const late = bed.sim.issueInvoice().invoice.invoiceNumber;
	bed.sim.data.setListingLag(undefined);
	const from = { updatedFrom: toServiceTimestamp(bed.sim.clock.now()) };
	expect(numbers((await list(bed, from)).body)).toEqual([]);
	bed.sim.clock.advance(4 * MINUTE);
	const answer = await list(bed, from);
	expect(numbers(answer.body)).toEqual([late]);
	expect(Date.parse(answer.headers.date)).toBe(Math.floor(serviceNow() / 1000) * 1000);
});

test('each request takes its latency in simulated time, four at once no longer than one; a fault’s latency adds to it', async () => {
	const bed = service({ latencyMs: 40 });
	const started = bed.time.now();
	await Promise.all([1, 2, 3, 4].map(async (page) => await list(bed, { page })));
	expect(bed.time.now() - started).toBe(40);
	bed.sim.faults.add({ route: 'invoices.list', latencyMs: 250, times: 1 });
	await list(bed, {});
	expect(bed.time.now() - started).toBe(40 + 290);
	expect(bed.sim.log.count('invoices.list')).toBe(5);
});

test('faults: a 429 with Retry-After after the requests it skips, a dropped connection; an unknown path is a 404', async () => {
	const bed = service();
	bed.sim.faults.add({ route: 'invoices.list', status: 429, retryAfter: 30, skip: 1, times: 1 });
	expect((await list(bed, {})).status).toBe(200);
	const limited = await list(bed, {});
	expect([limited.status, limited.headers['retry-after'], limited.body.code]).toEqual([
		429,
		'30',
		'rate_limited',
	]);
	expect((await list(bed, {})).status).toBe(200);
	bed.sim.faults.add({ route: 'assets.list', drop: true, times: 1 });
	const search = new URLSearchParams();
	const dropped = await bed.time.run(
		async () => await bed.sim.request({ method: 'GET', path: '/asset/v1/assets', query: search }),
	);
	expect(dropped).toEqual({ dropped: true });
	expect((await list(bed, {}, '/nowhere')).status).toBe(404);
});

test('a record changed between two page reads (onRequest) moves in an updatedAt order: the page after it shifts', async () => {
	const bed = service({ invoices: 0 });
	bed.sim.setListShape({ order: 'updatedAt' });
	const issued = Array.from({ length: 4 }, () => {
		bed.sim.clock.advance(1000);
		return bed.sim.issueInvoice().invoice.invoiceNumber;
	});
	const first = await list(bed, { page: 1, pageSize: 2 });
	bed.sim.onRequest = () => {
		bed.sim.clock.advance(1000);
		bed.sim.payInvoice(issued[0]);
		bed.sim.onRequest = undefined;
	};
	const second = await list(bed, { page: 2, pageSize: 2 });
	expect([numbers(first.body), numbers(second.body)]).toEqual([
		[issued[0], issued[1]],
		[issued[3], issued[0]],
	]);
});
