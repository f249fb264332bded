import type {
	IDataObject,
	INodeExecutionData,
	INodeProperties,
	INodeType,
	INodeTypeDescription,
	IPollFunctions,
} from 'n8n-workflow';
import { NodeConnectionTypes, NodeOperationError } from 'n8n-workflow';

import {
	ALL_EVENTS,
	CHOOSE_EVENT_TYPES,
	eventTypeOptions,
	selectedEventTypes,
} from './shared/events';
import { ServiceClient } from './transport';
import { paths, type Asset, type Invoice } from './transport/contract';
import { readPages, type ListClient } from './transport/pageReader';
import { kindOf, POLLABLE_EVENT_TYPES } from './trigger/polling/changes';
import { MAX_POLL_MS, runPoll } from './trigger/polling/poll';
import { findTestEvent } from './trigger/polling/testEvent';
import type { PolledPage, PollSeam } from './trigger/polling/window';

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

export class InvoicingAssetsPollingTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Invoicing & Assets Polling Trigger',
		name: 'invoicingAssetsPollingTrigger',
		icon: { light: 'file:invoicingAssets.svg', dark: 'file:invoicingAssets.dark.svg' },
		group: ['trigger'],
		version: 1,
		subtitle:
			'={{ ($parameter["events"] || []).includes("*") ? "All events" : ($parameter["events"] || []).join(", ") }}',
		description:
			'Starts the workflow when invoices or managed assets change, by asking the Data Service on a schedule; needs no public HTTPS address',
		defaults: { name: 'Invoicing & Assets Polling Trigger' },
		polling: true,
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'invoicingAssetsApi', required: true }],
		properties: pollingTriggerProperties,
	};

	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		const wanted = readWantedEvents(this);
		const kinds = [...new Set([...wanted].map(kindOf))];
		const seam = seamOf(new ServiceClient(this));
		// n8n's poll budget (2.38 and later; no such method before).
		const budgetMs = (this as Partial<IPollFunctions>).getPollBudgetMs?.() || MAX_POLL_MS;
		if (this.getMode() === 'manual') {
			const sample = await findTestEvent(seam, kinds, wanted, MAX_POLL_MS);
			if (sample) return [this.helpers.returnJsonArray([sample as unknown as IDataObject])];
			throw new NodeOperationError(this.getNode(), 'No record matches the selected events yet', {
				description:
					'The service has no invoice or managed asset for the events chosen in Events. Choose more events, or issue an invoice first, then fetch a test event again.',
			});
		}
		const reported = await runPoll(seam, this.getWorkflowStaticData('node'), {
			key: `${this.getWorkflow().id ?? ''}:${this.getNode().id}`,
			kinds,
			wanted,
			budgetMs,
			warn: (message) => this.logger.warn(message),
		});
		return reported ? [this.helpers.returnJsonArray(reported as unknown as IDataObject[])] : null;
	}
}

/** The seam of a poll in n8n: n8n's clock, and the Data Service's lists through the transport. */
export function seamOf(client: ListClient, now = () => Date.now()): PollSeam {
	return {
		now,
		requestPage: async ({ kind, query, page, pageSize, deadline }) => {
			const path = kind === 'invoice' ? paths.invoices : paths.assets;
			// No Limit: a page longer than asked for is read whole, or refused, never cut.
			const read = { path, qs: query, pageSize, startPage: page, pagesInFlight: 1, deadline };
			const first = await readPages<Invoice | Asset>(client, read).next();
			// The generator stops at its first page: nothing more is asked for.
			return first.value as PolledPage;
		},
	};
}

function readWantedEvents(context: IPollFunctions): Set<string> {
	const chosen = selectedEventTypes(context.getNodeParameter('events', []));
	const pollable: readonly string[] = POLLABLE_EVENT_TYPES;
	const wanted = new Set(
		chosen === null ? pollable : (chosen ?? []).filter((type) => pollable.includes(type)),
	);
	if (wanted.size === 0) {
		throw new NodeOperationError(context.getNode(), 'No event is selected', {
			description: `In Events, ${CHOOSE_EVENT_TYPES}. The Polling Trigger can see: ${pollable.join(', ')}.`,
		});
	}
	return wanted;
}
