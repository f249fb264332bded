import type { INodeProperties } from 'n8n-workflow';

import { ALL_EVENTS, eventTypeOptions } from '../../shared/events';
import { POLLABLE_EVENT_TYPES } from './changes';
import { LISTED_WITHIN_MS } from './memory';

const pollable = new Set<string>([ALL_EVENTS, ...POLLABLE_EVENT_TYPES]);

export const pollingTriggerProperties: INodeProperties[] = [
	{
		displayName:
			'Polling needs no public HTTPS address: n8n asks the Data Service for changed records on the Poll Times below, so an event starts the workflow up to one poll interval late. Each change starts the workflow once, across restarts and failed polls; a change is a record’s new state, so two changes within one second are two. Invoice Issued comes once per invoice, with the first change of it the trigger sees, when its issue date lies at most 3 days before and it was not listed when the trigger started; Invoice Paid, Invoice Cancelled and Asset Retired come once per record (a later edit of a retired asset is an Asset Updated, of a paid or cancelled invoice nothing). Polling sees each record as it is now: it cannot see Asset Created (assets carry no creation date, so a new asset is an Asset Updated), and of several changes to one asset between two polls it reports the last. A poll stays within n8n’s poll budget, so a large burst comes over several polls. The first poll after publishing only notes where to start; nothing before it is reported.',
		name: 'pollingNotice',
		type: 'notice',
		default: '',
	},
	{
		displayName: 'Events',
		name: 'events',
		type: 'multiOptions',
		required: true,
		options: eventTypeOptions
			.filter((option) => pollable.has(String(option.value)))
			.map((option) =>
				option.value === ALL_EVENTS
					? { ...option, description: 'Every event polling can see' }
					: option,
			),
		default: [ALL_EVENTS],
		description: `The events that start the workflow. Each item carries an eventId that is the same for the same change. Changes are read again once they are ${LISTED_WITHIN_MS / 60_000} minutes old by the service’s clock, so a change that reaches the list late is still found; what was reported is remembered, so none comes twice.`,
	},
];
