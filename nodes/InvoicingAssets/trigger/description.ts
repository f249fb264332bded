import type { INodeProperties } from 'n8n-workflow';

import { ALL_EVENTS, eventTypeOptions } from '../shared/events';
import { SEEN_EVENT_LIMIT, TOTAL_EVENT_LIMIT } from './recentEvents';

export const triggerProperties: INodeProperties[] = [
	{
		displayName:
			'The Data Service sends events only to HTTPS addresses (TLS 1.2 or later), so n8n’s webhook URLs must start with https://. Behind a proxy, set N8N_WEBHOOK_URL to n8n’s public https address. Testing this step subscribes the test URL while it waits for an event; publishing the workflow subscribes the production URL.',
		name: 'httpsNotice',
		type: 'notice',
		default: '',
	},
	{
		displayName: 'Events',
		name: 'events',
		type: 'multiOptions',
		required: true,
		options: eventTypeOptions,
		default: [ALL_EVENTS],
		description: 'The events that start the workflow',
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [
			{
				displayName: 'Description',
				name: 'description',
				type: 'string',
				default: '',
				placeholder: 'e.g. New invoices to accounting',
				description:
					'A note sent with the subscription, to tell it apart from others at the service',
			},
			{
				displayName: 'Ignore Repeated Deliveries',
				name: 'ignoreRepeatedDeliveries',
				type: 'boolean',
				default: true,
				description: `Whether to start the workflow only once per event when the service delivers an event again (it may, until it gets an answer). n8n remembers the last ${SEEN_EVENT_LIMIT} event IDs of this trigger, and ${TOTAL_EVENT_LIMIT} across all triggers of the n8n process, until it restarts.`,
			},
		],
	},
];
