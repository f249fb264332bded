import type { INodeProperties } from 'n8n-workflow';

import { ALL_EVENTS, eventTypeOptions } from '../../shared/events';
import { MAX_REMEMBERED_CHANGES, OVERLAP_MS, POLLABLE_EVENT_TYPES } from './changes';

const pollable = new Set<string>([ALL_EVENTS, ...POLLABLE_EVENT_TYPES]);

export const pollingTriggerProperties: INodeProperties[] = [
	{
		displayName:
			'Polling needs no public HTTPS address: n8n asks the Data Service for changed records on the Poll Times below, so an event starts the workflow up to one poll interval late, and every poll costs one request per record kind. Polling sees each record as it is now: it cannot see Asset Created (assets carry no creation date, so a new asset is reported as Asset Updated), and of several changes to one asset between two polls it reports the last. The first poll after publishing only notes where to start; nothing before it is reported.',
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
		description: `The events that start the workflow. Each item carries an eventId that is the same for the same change, so a Remove Duplicates node can rely on it. The trigger re-reads the last ${OVERLAP_MS / 60_000} minutes of changes on every poll and remembers up to ${MAX_REMEMBERED_CHANGES} of them per record kind, so none is reported twice.`,
	},
];
