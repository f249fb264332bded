import type { INodePropertyOptions } from 'n8n-workflow';

import { EVENT_TYPES } from '../transport/contract';

export const ALL_EVENTS = '*';

const EVENT_DESCRIPTIONS: Record<string, string> = {
	'invoice.issued': 'A new invoice was issued',
	'invoice.paid': 'An invoice was paid',
	'invoice.cancelled': 'An invoice was cancelled',
	'asset.created': 'A managed asset was added',
	'asset.updated': 'A managed asset changed',
	'asset.retired': 'A managed asset was retired',
};

function title(eventType: string): string {
	return eventType
		.split('.')
		.map((word) => word.charAt(0).toUpperCase() + word.slice(1))
		.join(' ');
}

export const eventTypeOptions: INodePropertyOptions[] = [
	{
		name: 'All Events',
		value: ALL_EVENTS,
		description: 'Every event, including types added later',
	},
	...EVENT_TYPES.map((eventType) => ({
		name: title(eventType),
		value: eventType,
		description: EVENT_DESCRIPTIONS[eventType] ?? eventType,
	})),
];

/** The service's `eventTypes`: null for all events, else the chosen types. */
export function selectedEventTypes(value: unknown): string[] | null {
	const chosen = (Array.isArray(value) ? value : [value]).filter(
		(entry): entry is string => typeof entry === 'string' && entry !== '',
	);
	return chosen.length === 0 || chosen.includes(ALL_EVENTS) ? null : chosen;
}
