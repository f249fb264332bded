import { FIRST_PAGE, MAX_PAGE_SIZE } from '../../../nodes/InvoicingAssets/transport/contract';
import { nextPage } from '../../../nodes/InvoicingAssets/transport/pagination';

describe('nextPage', () => {
	test.each([
		// alreadyRead, remaining, page, pageSize
		[0, Number.MAX_SAFE_INTEGER, 1, 100],
		[0, 5, 1, 5],
		[0, 100, 1, 100],
		[0, 150, 1, 100],
		[100, 50, 3, 50],
		[100, Number.MAX_SAFE_INTEGER, 2, 100],
		[1000, 50, 21, 50],
		[5, 5, 2, 5],
		[100, 1, 101, 1],
	])('after %i records with %i still wanted: page %i of size %i', (read, remaining, page, size) => {
		expect(nextPage(read, remaining)).toEqual({ page, pageSize: size });
	});

	test('never asks for more than remains, and its page starts exactly where reading stopped', () => {
		for (let read = 0; read <= 1000; read += 7) {
			for (const remaining of [1, 2, 3, 13, 50, 99, 100, 101, 250, Number.MAX_SAFE_INTEGER]) {
				const { page, pageSize } = nextPage(read, remaining);
				expect(pageSize).toBeGreaterThanOrEqual(1);
				expect(pageSize).toBeLessThanOrEqual(Math.min(MAX_PAGE_SIZE, remaining));
				expect((page - FIRST_PAGE) * pageSize).toBe(read);
			}
		}
	});

	test('reading a limit page by page ends exactly at the limit', () => {
		for (const limit of [1, 5, 99, 100, 101, 150, 1234, 2000]) {
			let read = 0;
			let requests = 0;
			while (read < limit) {
				read += nextPage(read, limit - read).pageSize;
				requests += 1;
			}
			expect(read).toBe(limit);
			expect(requests).toBeGreaterThanOrEqual(Math.ceil(limit / MAX_PAGE_SIZE));
		}
	});
});
