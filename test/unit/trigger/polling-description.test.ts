import { InvoicingAssetsPollingTrigger } from '../../../nodes/InvoicingAssets/InvoicingAssetsPollingTrigger.node';
import { InvoicingAssetsTrigger } from '../../../nodes/InvoicingAssets/InvoicingAssetsTrigger.node';
import { EVENT_TYPES } from '../../../nodes/InvoicingAssets/transport/contract';

const polling = new InvoicingAssetsPollingTrigger().description;
const events = polling.properties.find((property) => property.name === 'events');
const values = (events?.options ?? []).map((option) => ('value' in option ? option.value : ''));

describe('the Polling Trigger’s description', () => {
	test('is an n8n polling trigger with the credential, and no webhooks', () => {
		expect(polling).toMatchObject({
			name: 'invoicingAssetsPollingTrigger',
			displayName: 'Invoicing & Assets Polling Trigger',
			polling: true,
			group: ['trigger'],
			inputs: [],
			credentials: [{ name: 'invoicingAssetsApi', required: true }],
		});
		expect(polling.webhooks).toBeUndefined();
	});

	test('offers the webhook trigger’s events that polling can tell apart, under the same names', () => {
		const webhookEvents = new InvoicingAssetsTrigger().description.properties.find(
			(property) => property.name === 'events',
		);
		const webhookValues = (webhookEvents?.options ?? []).map((option) =>
			'value' in option ? option.value : '',
		);
		const notPollable = ['asset.created'];
		expect(values).toEqual(webhookValues.filter((value) => !notPollable.includes(String(value))));
		expect(EVENT_TYPES).toEqual(expect.arrayContaining(notPollable));
	});

	test('says in two short sentences what it needs and promises, and links to what polling can see; each parameter in one sentence', () => {
		const notice = String(
			polling.properties.find((property) => property.type === 'notice')?.displayName,
		);
		expect(notice.split(/(?<=\.)\s/)).toHaveLength(2);
		expect(notice).toContain('Each change starts the workflow once');
		expect(notice).toMatch(
			/href="[^"]+\/docs\/choosing-a-trigger\.md#what-polling-can-and-cannot-see"/,
		);
		for (const property of polling.properties.filter(({ type }) => type !== 'notice')) {
			expect(String(property.description)).not.toMatch(/\.\s/);
		}
	});
});
