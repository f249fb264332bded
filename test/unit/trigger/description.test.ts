/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { INodeProperties } from 'n8n-workflow';

import { InvoicingAssets } from '../../../nodes/InvoicingAssets/InvoicingAssets.node';
import { InvoicingAssetsTrigger } from '../../../nodes/InvoicingAssets/InvoicingAssetsTrigger.node';
import { EVENT_TYPES } from '../../../nodes/InvoicingAssets/transport/contract';
import { parseQuery } from '../../harness/webhooks';

const { description } = new InvoicingAssetsTrigger();
const property = (name: string) =>
	description.properties.find((entry) => entry.name === name) as INodeProperties;

/** Sentences in an editor text: a full stop and a capital start the next one ("e.g. x" does not). */
const sentences = (text: string) => text.trim().split(/[.!?]\s+(?=[A-Z])/).length;

/** Every parameter and option of a node, however deep in collections. */
function parametersOf(properties: unknown[]): INodeProperties[] {
	return (properties as INodeProperties[]).flatMap((entry) => [
		entry,
		...parametersOf((entry.options ?? []) as unknown[]),
	]);
}

test('every description in the editor of the action node and the webhook trigger is one sentence', () => {
	const described = [new InvoicingAssets().description, description]
		.flatMap((node) => parametersOf(node.properties))
		.filter((entry) => typeof entry.description === 'string');
	const longer = described.filter((entry) => sentences(entry.description ?? '') > 1);
	expect(longer.map((entry) => `${entry.displayName ?? entry.name}: ${entry.description}`)).toEqual(
		[],
	);
	expect(described.length).toBeGreaterThan(20);
});

describe('trigger description', () => {
	test('one POST webhook at path "webhook", answered on receipt with the node’s own response', () => {
		expect(description.webhooks).toEqual([
			{
				name: 'default',
				httpMethod: 'POST',
				responseMode: 'onReceived',
				responseData: '',
				path: 'webhook',
			},
		]);
		// n8n answers `responseData` itself when it is truthy and 'firstEntryJson' when it is absent.
		expect(description.webhooks?.[0].responseData).toBeFalsy();
		expect(description.webhooks?.[0].responseData).not.toBe('noData');
	});

	test('is a trigger with no inputs and the package credential', () => {
		expect(description.group).toEqual(['trigger']);
		expect(description.inputs).toEqual([]);
		expect(description.credentials).toEqual([{ name: 'invoicingAssetsApi', required: true }]);
		expect(description.subtitle).toContain('$parameter["events"]');
	});

	test('Events offers All Events and every known type, All Events by default', () => {
		const events = property('events');
		expect(events.type).toBe('multiOptions');
		expect(events.default).toEqual(['*']);
		expect(events.options?.map((option) => (option as { value: string }).value)).toEqual([
			'*',
			...EVENT_TYPES,
		]);
	});

	test('Options: Description and Ignore Repeated Deliveries (on by default)', () => {
		const options = property('options').options as INodeProperties[];
		expect(options.map((option) => [option.displayName, option.type, option.default])).toEqual([
			['Description', 'string', ''],
			['Ignore Repeated Deliveries', 'boolean', true],
		]);
	});

	test('a notice of at most two sentences names the HTTPS rule and N8N_WEBHOOK_URL', () => {
		const notice = property('httpsNotice');
		expect(notice.type).toBe('notice');
		expect(sentences(notice.displayName)).toBeLessThanOrEqual(2);
		for (const text of ['https://', 'TLS 1.2', 'N8N_WEBHOOK_URL']) {
			expect(notice.displayName).toContain(text);
		}
	});

	test('the codex file is valid JSON naming this node', () => {
		const codex = JSON.parse(
			readFileSync(
				join(__dirname, '../../../nodes/InvoicingAssets/InvoicingAssetsTrigger.node.json'),
				'utf8',
			),
		);
		expect(codex.node).toBe(`n8n-nodes-invoicing-assets.${description.name}`);
	});
});

describe('the harness query parser (as express’s extended parser)', () => {
	test.each([
		['apiKey=a', { apiKey: 'a' }],
		['apiKey=a&apiKey=b', { apiKey: ['a', 'b'] }],
		['apiKey[]=a', { apiKey: ['a'] }],
		['apiKey[x]=a', { apiKey: { x: 'a' } }],
		['apiKey=', { apiKey: '' }],
		['a=1&b=2', { a: '1', b: '2' }],
	])('%s', (search, expected) => {
		expect(parseQuery(search)).toEqual(expected);
	});
});
