import type { INodeProperties } from 'n8n-workflow';

import { ALL_EVENTS, eventTypeOptions } from '../../shared/events';
import { POLLABLE_EVENT_TYPES } from './changes';

const pollable = new Set<string>([ALL_EVENTS, ...POLLABLE_EVENT_TYPES]);

const CHOOSING_A_TRIGGER =
	'https://github.com/invoicing-assets/n8n-nodes-invoicing-assets/blob/main/docs/choosing-a-trigger.md#what-polling-can-and-cannot-see';

export const pollingTriggerProperties: INodeProperties[] = [
	{
		displayName: `Polling needs no public HTTPS address: n8n asks the Data Service for changes on the Poll Times below. Each change starts the workflow once (<a href="${CHOOSING_A_TRIGGER}" target="_blank">what polling can see</a>).`,
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
		description:
			'The events that start the workflow; an item’s eventId is the same for the same change',
	},
];
