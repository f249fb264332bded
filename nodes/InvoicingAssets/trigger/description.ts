import type { INodeProperties } from 'n8n-workflow';

import { ALL_EVENTS, eventTypeOptions } from '../shared/events';

export const triggerProperties: INodeProperties[] = [
	{
		displayName:
			'The Data Service delivers only to https:// webhook URLs (TLS 1.2 or later). Behind a proxy, set N8N_WEBHOOK_URL to n8n’s public https address.',
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
				description:
					'Whether to start the workflow only once when the service delivers the same event again',
			},
		],
	},
];
