/* eslint-disable @n8n/community-nodes/icon-validation, @n8n/community-nodes/require-node-description-fields, @n8n/community-nodes/webhook-lifecycle-complete -- a test fixture, never published: no icon, and no webhookMethods (its URL is registered nowhere; they would run at publish, not per delivery) */
/**
 * The thinnest community trigger there is, for the reliability run's delivery-latency floor
 * (issue 31): it answers 200 with a small JSON acknowledgement, as the Invoicing & Assets Trigger
 * does, and emits the request body as one item. No key check, no parsing beyond n8n's own.
 *
 * TEST TREE ONLY: never part of the published package (`files: ["dist"]`; the package's build
 * compiles only nodes/ and credentials/). test/n8n/minimal-trigger.ts transpiles it, packs it as
 * its own community package and installs it beside ours in the same n8n. Type-only imports, so the
 * built file needs nothing at run time.
 */
import type {
	IWebhookFunctions,
	IWebhookResponseData,
	INodeType,
	INodeTypeDescription,
	NodeConnectionType,
} from 'n8n-workflow';

export class MinimalTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Minimal Trigger',
		name: 'minimalTrigger',
		group: ['trigger'],
		version: 1,
		description: 'Test only: answers 200 and emits the body as one item',
		defaults: { name: 'Minimal Trigger' },
		inputs: [],
		outputs: ['main' as NodeConnectionType],
		properties: [],
		webhooks: [
			{
				name: 'default',
				httpMethod: 'POST',
				responseMode: 'onReceived',
				// As our trigger: empty, so n8n answers with webhookResponse below.
				responseData: '',
				path: 'webhook',
			},
		],
	};

	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		return {
			webhookResponse: { received: true },
			workflowData: [[{ json: this.getBodyData() }]],
		};
	}
}
