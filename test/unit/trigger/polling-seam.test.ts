/**
 * The Polling Trigger's seam in n8n (`seamOf`): one page through the transport's page reader. A
 * page longer than asked for (a service that ignores `pageSize`) is read whole or refused, never
 * cut to the size asked for, which would lose its other records silently.
 */
import type { IN8nHttpFullResponse } from 'n8n-workflow';

import { seamOf } from '../../../nodes/InvoicingAssets/InvoicingAssetsPollingTrigger.node';
import type { ListClient } from '../../../nodes/InvoicingAssets/transport/pageReader';
import { actionNode } from '../fixtures';

/** A service that answers every list request with `count` invoices on one page. */
function ignoringPageSize(count: number, totalItems: number | null): ListClient {
	const items = Array.from({ length: count }, (_, index) => ({
		invoiceNumber: `INV-${String(index).padStart(7, '0')}`,
		updatedAt: '2026-11-28T12:00:00Z',
	}));
	const body = { items, page: 1, pageSize: count, totalItems };
	return {
		getNode: () => actionNode,
		requestFull: async () => ({ statusCode: 200, headers: {}, body }) as IN8nHttpFullResponse,
	};
}

const request = { kind: 'invoice' as const, query: {}, page: 1, pageSize: 100, deadline: 0 };

test('a page of 150 records where 100 were asked for, with a total that says it holds them all, gives all 150', async () => {
	const page = await seamOf(ignoringPageSize(150, 150)).requestPage(request);
	expect(page.records).toHaveLength(150);
	expect(page.endOfList).toBe(true);
});

test('a page of 150 records where 100 were asked for, without a total, is refused: the service pages otherwise', async () => {
	await expect(seamOf(ignoringPageSize(150, null)).requestPage(request)).rejects.toThrow(
		'The service pages this list differently from the contract',
	);
});
