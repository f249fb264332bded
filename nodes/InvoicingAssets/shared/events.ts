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

/**
 * The service's `eventTypes` for a selection: null for All Events, else the chosen types;
 * undefined when nothing is chosen (never read as "all").
 */
export function selectedEventTypes(value: unknown): string[] | null | undefined {
	const chosen = (Array.isArray(value) ? value : [value]).filter(
		(entry): entry is string => typeof entry === 'string' && entry !== '',
	);
	if (chosen.length === 0) return undefined;
	return chosen.includes(ALL_EVENTS) ? null : chosen;
}

/** How to fix an empty selection, in the words of the editor. */
export const CHOOSE_EVENT_TYPES = 'choose at least one event type, or All Events';
