import type { IDataObject } from 'n8n-workflow';
import { ObservableObject } from 'n8n-workflow';

import {
	awaitsReplacement,
	forgetSubscription,
	MAX_RETIRING_SUBSCRIPTIONS,
	noteReplacement,
	readRetiringSubscriptions,
	readStoredSubscription,
	retireSubscription,
	storeSubscription,
	type RetiringSubscription,
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

describe('retiring subscriptions (of a replaced API key)', () => {
	const future = '2099-01-01T00:00:00Z';
	const retiring = (id: string, endsBy = future): Omit<RetiringSubscription, 'replaced'> => ({
		subscriptionId: id,
		deliveryKeyHash: id.padEnd(64, '0'),
		clientId: 'old-key',
		endsBy,
	});

	test('are kept apart from the stored subscription: forgetting it keeps them', () => {
		const data = staticData();
		storeSubscription(data, { subscriptionId: 'sub-2', deliveryKeyHash: 'b'.repeat(64) });
		retireSubscription(data, retiring('sub-1'));
		forgetSubscription(data);
		expect(readStoredSubscription(data)).toBeUndefined();
		expect(readRetiringSubscriptions(data)).toEqual([{ ...retiring('sub-1'), replaced: false }]);
	});

	test('end with their key: an ended one is neither read nor kept', () => {
		const data = staticData();
		retireSubscription(data, retiring('ended', '2020-01-01T00:00:00Z'));
		expect(readRetiringSubscriptions(data)).toEqual([]);
		retireSubscription(data, retiring('sub-1'));
		expect(
			(data.retiringSubscriptions as IDataObject[]).map((entry) => entry.subscriptionId),
		).toEqual(['sub-1']);
	});

	test(`are at most ${MAX_RETIRING_SUBSCRIPTIONS}, the oldest dropped first, each once`, () => {
		const data = staticData();
		for (let index = 1; index <= MAX_RETIRING_SUBSCRIPTIONS + 2; index++) {
			retireSubscription(data, retiring(`sub-${index}`));
		}
		retireSubscription(data, retiring(`sub-${MAX_RETIRING_SUBSCRIPTIONS + 2}`));
		expect(readRetiringSubscriptions(data).map((entry) => entry.subscriptionId)).toEqual(
			Array.from({ length: MAX_RETIRING_SUBSCRIPTIONS }, (_, index) => `sub-${index + 3}`),
		);
	});

	test('get the time of their replacement and their end once, and keep them', () => {
		const data = staticData();
		retireSubscription(data, retiring('sub-1'));
		expect(awaitsReplacement(data)).toBe(true);
		noteReplacement(data, { replacedAt: '2026-11-24T10:00:00Z', endsBy: '2098-01-01T00:00:00Z' });
		retireSubscription(data, retiring('sub-2'));
		noteReplacement(data, { replacedAt: undefined, endsBy: '2098-02-01T00:00:00Z' });
		expect(
			readRetiringSubscriptions(data).map(({ replaced, replacedAt, endsBy }) => ({
				replaced,
				replacedAt,
				endsBy,
			})),
		).toEqual([
			{ replaced: true, replacedAt: '2026-11-24T10:00:00Z', endsBy: '2098-01-01T00:00:00Z' },
			{ replaced: true, replacedAt: undefined, endsBy: '2098-02-01T00:00:00Z' },
		]);
		expect(awaitsReplacement(data)).toBe(false);
	});

	test('entries that are not retiring subscriptions are ignored, and none means no write', () => {
		expect(
			readRetiringSubscriptions({
				retiringSubscriptions: [null, 'x', { subscriptionId: 'sub-1' }, { ...retiring('ok') }],
			}).map((entry) => entry.subscriptionId),
		).toEqual(['ok']);
		const data = staticData();
		forgetSubscription(data);
		expect(awaitsReplacement(data)).toBe(false);
		expect(data.__dataChanged).toBe(false);
	});
});
