import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError, updateDisplayOptions } from 'n8n-workflow';

import type { ServiceClient } from '../../transport';
import { EVENT_TYPES, paths, type SubscriptionRequest } from '../../transport/contract';
import { readCreatedSubscriptionId } from '../../transport/responses';
import { redactDeliveryKey, withDeliveryKey } from '../../transport/notificationUrl';
import {
	ALL_EVENTS,
	CHOOSE_EVENT_TYPES,
	eventTypeOptions,
	selectedEventTypes,
} from '../../shared/events';
import { invalidInput, requireHttpsUrl } from '../validation';

const properties: INodeProperties[] = [
	{
		displayName: 'Notification URL',
		name: 'notificationUrl',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. https://n8n.example.com/webhook/invoices',
		description:
			'The HTTPS address (TLS 1.2 or later, reachable from the internet) the service posts events to',
	},
	{
		displayName: 'Event Types',
		name: 'eventTypes',
		type: 'multiOptions',
		options: eventTypeOptions,
		default: [ALL_EVENTS],
		description: 'Which events the subscription receives',
	},
	{
		displayName: 'Additional Fields',
		name: 'additionalFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		options: [
			{
				displayName: 'Description',
				name: 'description',
				type: 'string',
				default: '',
				placeholder: 'e.g. New invoices to accounting',
				description: 'A note that tells this subscription apart from others',
			},
			{
				displayName: 'Delivery API Key',
				name: 'deliveryKey',
				type: 'string',
				typeOptions: { password: true },
				default: '',
				description:
					'A secret the service adds to the Notification URL as the "apiKey" query argument, so the receiver can reject deliveries that do not carry it',
			},
		],
	},
];

/** A repeated create makes a second subscription, so items are created one by one. */
export const oneItemAtATime = true;

export const description = updateDisplayOptions(
	{ show: { resource: ['subscription'], operation: ['create'] } },
	properties,
);

export async function execute(
	this: IExecuteFunctions,
	client: ServiceClient,
	itemIndex: number,
): Promise<IDataObject[]> {
	const url = requireHttpsUrl(
		this,
		itemIndex,
		this.getNodeParameter('notificationUrl', itemIndex),
		'Notification URL',
	);
	const eventTypes = selectedEventTypes(this.getNodeParameter('eventTypes', itemIndex, []));
	if (eventTypes === undefined) {
		throw invalidInput(
			this,
			itemIndex,
			`No Event Types are chosen: ${CHOOSE_EVENT_TYPES}`,
			'Choose under Event Types the events the subscription should receive, or All Events to receive every event, including types added later.',
		);
	}
	if (eventTypes?.some((type) => !(EVENT_TYPES as readonly string[]).includes(type))) {
		throw invalidInput(
			this,
			itemIndex,
			'The Event Types contain an unknown type',
			`Choose from: ${EVENT_TYPES.join(', ')}, or All Events.`,
		);
	}
	const fields = this.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;
	const deliveryKey = typeof fields.deliveryKey === 'string' ? fields.deliveryKey : '';
	const notificationUrl = deliveryKey ? withDeliveryKey(url, deliveryKey) : url;
	const body: SubscriptionRequest = {
		notificationUrl,
		eventTypes,
		description:
			typeof fields.description === 'string' && fields.description !== ''
				? fields.description
				: null,
	};

	const created = await client.request({
		method: 'POST',
		path: paths.subscriptions,
		body: { ...body },
		itemIndex,
	});
	const id = readCreatedSubscriptionId(created);
	if (!id) {
		throw new NodeOperationError(
			this.getNode(),
			'The service answered without the new subscription’s ID',
			{
				description:
					'The subscription may exist anyway. Use Subscription → Get Many to find it, and delete it if it is not wanted.',
				itemIndex,
			},
		);
	}
	return [{ id, ...body, notificationUrl: redactDeliveryKey(notificationUrl) }];
}
