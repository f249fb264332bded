import type { IDataObject } from 'n8n-workflow';
import { ObservableObject } from 'n8n-workflow';

import {
	forgetSubscription,
	readStoredSubscription,
	storeSubscription,
} from '../../../nodes/InvoicingAssets/trigger/state';

/** Node static data as n8n hands it out: an observable object whose changes are tracked. */
function staticData(initial: IDataObject = {}): IDataObject & { __dataChanged?: boolean } {
	return ObservableObject.create(initial) as IDataObject & { __dataChanged?: boolean };
}

describe('stored subscription', () => {
	test('is read back as stored, and forgotten entirely', () => {
		const data = staticData();
		expect(readStoredSubscription(data)).toBeUndefined();
		storeSubscription(data, { subscriptionId: 'sub-1', deliveryKeyHash: 'a'.repeat(64) });
		expect(data).toEqual({ subscriptionId: 'sub-1', deliveryKeyHash: 'a'.repeat(64) });
		expect(readStoredSubscription(data)).toEqual({
			subscriptionId: 'sub-1',
			deliveryKeyHash: 'a'.repeat(64),
		});
		forgetSubscription(data);
		expect({ ...data }).toEqual({});
	});

	test('storing replaces what was stored', () => {
		const data = staticData();
		storeSubscription(data, { subscriptionId: 'sub-1', deliveryKeyHash: 'a'.repeat(64) });
		storeSubscription(data, { subscriptionId: 'sub-2', deliveryKeyHash: 'b'.repeat(64) });
		expect({ ...data }).toEqual({ subscriptionId: 'sub-2', deliveryKeyHash: 'b'.repeat(64) });
	});

	test('an ID without a hash is still read (so it can be deleted) but no key matches it', () => {
		expect(readStoredSubscription({ subscriptionId: 'sub-1' })).toEqual({
			subscriptionId: 'sub-1',
			deliveryKeyHash: '',
		});
		expect(readStoredSubscription({ subscriptionId: '' })).toBeUndefined();
		expect(readStoredSubscription({ subscriptionId: 7 })).toBeUndefined();
	});

	test('forgetting nothing leaves the static data unchanged (n8n saves nothing)', () => {
		const data = staticData();
		forgetSubscription(data);
		expect(data.__dataChanged).toBe(false);
		storeSubscription(data, { subscriptionId: 'sub-1', deliveryKeyHash: 'a'.repeat(64) });
		expect(data.__dataChanged).toBe(true);
	});
});
