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
		expect(values).toEqual(webhookValues.filter((value) => value !== 'asset.created'));
		expect(EVENT_TYPES).toContain('asset.created');
	});

	test('says which event it cannot see, and why', () => {
		const notice = polling.properties.find((property) => property.type === 'notice');
		expect(notice?.displayName).toContain(
			'it cannot see Asset Created (assets carry no creation date',
		);
	});

	test('states what it guarantees: each change once, the rule for Invoice Issued, final states once, the poll budget', () => {
		const notice = String(
			polling.properties.find((property) => property.type === 'notice')?.displayName,
		);
		for (const rule of [
			'Each change starts the workflow once',
			'two changes within one second are two',
			'Invoice Issued comes once per invoice, with the first change of it the trigger sees, when its issue date lies at most 3 days before and it was not listed when the trigger started',
			'Invoice Paid, Invoice Cancelled and Asset Retired come once per record',
			'A poll stays within n8n’s poll budget, so a large burst comes over several polls',
		]) {
			expect(notice).toContain(rule);
		}
	});
});
