import type { INodePropertyOptions } from 'n8n-workflow';

import { EVENT_TYPES, type EventType } from '../transport/contract';

export const ALL_EVENTS = '*';

/** Each event type's name and description in the editor. */
const EVENT_NAMES: Record<EventType, [string, string]> = {
	'invoice.issued': ['Invoice Issued', 'A new invoice was issued'],
	'invoice.paid': ['Invoice Paid', 'An invoice was paid'],
	'invoice.overdue': ['Invoice Overdue', 'An issued invoice became overdue'],
	'invoice.cancelled': ['Invoice Cancelled', 'An invoice was cancelled'],
	'asset.created': ['Asset Created', 'A managed asset was added'],
	'asset.updated': ['Asset Updated', 'A managed asset changed'],
	'asset.retired': ['Asset Retired', 'A managed asset was retired'],
};

export const eventTypeOptions: INodePropertyOptions[] = [
	{
		name: 'All Events',
		value: ALL_EVENTS,
		description: 'Every event, including types added later',
	},
	...EVENT_TYPES.map((value) => ({
		name: EVENT_NAMES[value][0],
		value,
		description: EVENT_NAMES[value][1],
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
