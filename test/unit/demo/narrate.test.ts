import type { Execution } from '../../n8n/executions';
import { narrate, narrationLine } from '../../demo/narrate';

type Items = Array<Record<string, unknown>>;

/** An execution as n8n's public API returns it with its data: each node's output items. */
function execution(
	status: string,
	outputs: Record<string, Items>,
	error?: { node: string; message: string },
): Execution {
	const runData: NonNullable<Execution['data']>['resultData']['runData'] = {};
	for (const [node, items] of Object.entries(outputs)) {
		runData[node] = [{ data: { main: [items.map((json) => ({ json }))] } }];
	}
	if (error) runData[error.node] = [{ error: { message: error.message } }];
	return {
		id: '7',
		status,
		finished: status === 'success',
		mode: 'webhook',
		startedAt: '2026-11-23T20:00:00.000Z',
		stoppedAt: '2026-11-23T20:00:01.000Z',
		data: { resultData: { runData, ...(error ? { error: { message: error.message } } : {}) } },
	};
}

const event = {
	eventId: 'e-1',
	eventType: 'invoice.issued',
	occurredAt: '2026-11-23T20:00:00Z',
	subscriptionId: 's-1',
	data: { invoiceNumber: 'INV-0000201' },
};
const asset = (assetId: string) => ({ assetId, serialNumber: `SN-${assetId}`, type: 'router' });

describe('demo narration', () => {
	it('reads the four-node form: the assets Managed Asset Get output, each once', () => {
		const run = execution('success', {
			'New Invoice Issued': [event],
			'Get Invoice': [{ invoiceNumber: 'INV-0000201', assetIds: ['AST-1', 'AST-2'] }],
			'One Item per Billed Asset': [
				{ invoiceNumber: 'INV-0000201', assetIds: 'AST-1' },
				{ invoiceNumber: 'INV-0000201', assetIds: 'AST-2' },
			],
			'Get Managed Asset': [asset('AST-1'), asset('AST-2'), asset('AST-1')],
		});
		expect(narrationLine(narrate(run))).toBe(
			'execution 7  invoice INV-0000201  2 assets fetched (AST-1, AST-2)  success',
		);
	});

	it('reads Include Billed Assets: the invoice item’s assets, a missing one counted apart', () => {
		const run = execution('success', {
			'New Invoice Issued': [event],
			'Get Invoice': [
				{ invoiceNumber: 'INV-0000201', assets: [asset('AST-3'), null, asset('AST-4')] },
			],
		});
		expect(narrationLine(narrate(run))).toBe(
			'execution 7  invoice INV-0000201  2 assets fetched (AST-3, AST-4), 1 not found  success',
		);
	});

	it('tells a failed execution with the node and its message', () => {
		const run = execution(
			'error',
			{ 'New Invoice Issued': [event] },
			{ node: 'Get Invoice', message: 'The API key is not allowed to do this' },
		);
		expect(narrationLine(narrate(run))).toBe(
			'execution 7  invoice INV-0000201  0 assets fetched  error: The API key is not allowed to do this (in "Get Invoice")',
		);
	});
});
