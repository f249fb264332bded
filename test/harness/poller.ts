import { PollContext } from 'n8n-core';
import type {
	IDataObject,
	INode,
	INodeCredentialsDetails,
	INodeExecutionData,
	IPollFunctions,
	IWorkflowBase,
	WorkflowActivateMode,
	WorkflowExecuteMode,
} from 'n8n-workflow';
import { Workflow } from 'n8n-workflow';

import { CREDENTIAL_TYPE, POLLING_TRIGGER_NODE_TYPE } from './node-types';
import type { PollOutcome } from './polled-events';
import type { Harness } from './workflow';

export const POLLING_NODE_NAME = 'Polling Trigger';

export type { PollOutcome } from './polled-events';

/**
 * A published workflow with the Polling Trigger, run with n8n-core's PollContext the way n8n's
 * poll scheduler runs it: the workflow object (and its static data) lives in memory while the
 * workflow is active; the static data is saved (as to n8n's database) after the activation poll
 * and whenever a poll emits items; a restart loads the saved static data into a new workflow
 * object and polls once for the activation ('init'). A poll that throws is n8n's trigger error.
 *
 * With `durable`, as n8n 2.41's durable scheduler with durable cursors runs it: every poll gets
 * the saved static data afresh; the node's static data of the poll run at publishing is kept only
 * when that poll emits (the workflow's global static data is saved either way), and a scheduled
 * poll's node static data is committed when it changed it, whether it emits or not.
 */
export class PollingWorkflow {
	/** The node's static data as n8n's database holds it (JSON). */
	private saved = '{}';

	/** The workflow's global static data as n8n's database holds it (JSON). */
	private savedGlobal = '{}';

	private workflow?: Workflow;

	/** The items of every execution the polls started, in order. */
	readonly executions: INodeExecutionData[][] = [];

	constructor(
		private readonly harness: Harness,
		private readonly credential: INodeCredentialsDetails,
		private readonly parameters: IDataObject,
		/** What n8n's getPollBudgetMs answers (2.x engine); n8n-core's default (5 minutes) when not given. */
		public pollBudgetMs?: number,
		private readonly durable = false,
	) {}

	/** Publishing (or n8n starting with the workflow published): the activation poll. */
	async activate(
		activation: WorkflowActivateMode = 'activate',
	): Promise<INodeExecutionData[] | null> {
		this.workflow = this.newWorkflow();
		const items = await this.run(this.workflow, 'trigger', activation);
		if (this.durable) this.saveGlobal();
		else this.save();
		return items;
	}

	/**
	 * One scheduled poll; a thrown error is returned, as n8n turns it into a trigger error. With
	 * `commitLater` (durable only) the static data of a poll that emits lands only at
	 * `commitHeld()`, as n8n's durable scheduler saves it with the execution after the poll.
	 */
	async poll(commitLater = false): Promise<PollOutcome> {
		if (!this.workflow) throw new Error('The workflow is not active');
		if (this.durable) this.workflow = this.newWorkflow();
		const before = this.saved;
		try {
			const items = await this.run(this.workflow, 'trigger', this.durable ? 'update' : 'activate');
			// The durable scheduler commits what a poll changed; a poll that changed nothing, nothing.
			const node = this.workflow.getNode(POLLING_NODE_NAME) as INode;
			const changed = JSON.stringify(this.workflow.getStaticData('node', node)) !== before;
			if (this.durable && changed) this.save();
			if (commitLater && items !== null) {
				this.held = this.saved;
				this.saved = before;
			}
			return { items };
		} catch (error) {
			return { error: error as Error };
		}
	}

	private held?: string;

	/** The static data of the poll whose commit was held lands now. */
	commitHeld() {
		if (this.held !== undefined) this.saved = this.held;
		this.held = undefined;
	}

	/** n8n stops (memory lost; the database stays) and starts again with the workflow published. */
	async restart(): Promise<INodeExecutionData[] | null> {
		this.workflow = undefined;
		return await this.activate('init');
	}

	/** The editor's Fetch Test Event: a manual poll on a copy of the saved workflow. */
	async fetchTestEvent(): Promise<INodeExecutionData[] | null> {
		const workflow = this.newWorkflow();
		const context = this.context(workflow, 'manual', 'manual');
		const result = await this.nodeType(workflow).poll!.call(context);
		return result?.[0] ?? null;
	}

	/** Changes the trigger's static data in place, as a test's fault (n8n saves it as it is). */
	editStaticData(edit: (staticData: IDataObject) => void) {
		if (!this.workflow) throw new Error('The workflow is not active');
		edit(this.workflow.getStaticData('node', this.workflow.getNode(POLLING_NODE_NAME) as INode));
		this.save();
	}

	/** The static data n8n would have saved by now. */
	savedStaticData(): IDataObject {
		return JSON.parse(this.saved) as IDataObject;
	}

	private async run(
		workflow: Workflow,
		mode: WorkflowExecuteMode,
		activation: WorkflowActivateMode,
	): Promise<INodeExecutionData[] | null> {
		const context = this.context(workflow, mode, activation);
		const result = await this.nodeType(workflow).poll!.call(context);
		if (result === null) return null;
		// n8n's __emit: the static data is saved, then the execution starts with the items.
		this.save();
		this.executions.push(result[0]);
		return result[0];
	}

	private save() {
		if (!this.workflow) return;
		const node = this.workflow.getNode(POLLING_NODE_NAME) as INode;
		this.saved = JSON.stringify(this.workflow.getStaticData('node', node));
		this.saveGlobal();
	}

	private saveGlobal() {
		if (this.workflow) this.savedGlobal = JSON.stringify(this.workflow.getStaticData('global'));
	}

	private context(
		workflow: Workflow,
		mode: WorkflowExecuteMode,
		activation: WorkflowActivateMode,
	): IPollFunctions {
		const node = workflow.getNode(POLLING_NODE_NAME) as INode;
		const workflowData = { id: workflow.id, name: workflow.name } as IWorkflowBase;
		const additionalData = this.harness.additionalData(mode, 'poll', workflowData);
		if (this.pollBudgetMs === undefined) {
			return new PollContext(workflow, node, additionalData, mode, activation);
		}
		const budget = this.pollBudgetMs;
		const context = new PollContext(
			workflow,
			node,
			additionalData,
			mode,
			activation,
			undefined,
			undefined,
			undefined,
			undefined,
			undefined,
			() => budget,
		);
		// n8n 1.x's engine gives a poll no budget: the harness hands the node the one the test sets,
		// so that what the trigger does across polls runs on both engines.
		return 'getPollBudgetMs' in context
			? context
			: Object.assign(context, { getPollBudgetMs: () => budget });
	}

	private nodeType(workflow: Workflow) {
		return this.harness.nodeTypes.getByNameAndVersion(
			(workflow.getNode(POLLING_NODE_NAME) as INode).type,
		);
	}

	private newWorkflow(): Workflow {
		const node: INode = {
			id: 'polling-trigger',
			name: POLLING_NODE_NAME,
			type: POLLING_TRIGGER_NODE_TYPE,
			typeVersion: 1,
			position: [0, 0],
			parameters: {
				pollTimes: { item: [{ mode: 'everyMinute' }] },
				...this.parameters,
			} as INode['parameters'],
			credentials: { [CREDENTIAL_TYPE]: this.credential },
		};
		return new Workflow({
			id: 'polling-workflow',
			name: 'Polling workflow',
			nodes: [node],
			connections: {},
			nodeTypes: this.harness.nodeTypes,
			active: true,
			staticData: {
				global: JSON.parse(this.savedGlobal) as IDataObject,
				[`node:${POLLING_NODE_NAME}`]: JSON.parse(this.saved) as IDataObject,
			},
		});
	}
}
