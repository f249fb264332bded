import { ExecutionLifecycleHooks, WorkflowExecute } from 'n8n-core';
import type {
	ExecutionError,
	ICredentialDataDecryptedObject,
	IConnections,
	IDataObject,
	INode,
	INodeCredentialsDetails,
	INodeExecutionData,
	IRun,
	IWorkflowBase,
	IWorkflowExecuteAdditionalData,
	WorkflowExecuteMode,
} from 'n8n-workflow';
import { createRunExecutionData, Workflow } from 'n8n-workflow';

import { TestCredentialsHelper } from './credentials-helper';
import { ACTION_NODE_TYPE, CREDENTIAL_TYPE, PackageNodeTypes } from './node-types';

export interface NodeRun {
	/** The node's first output, or [] when it failed. */
	items: INodeExecutionData[];
	/** The node's error when it failed (with Continue On Fail off). */
	error?: ExecutionError;
	/** Hints the node added to its run (shown in the editor as notices). */
	hints: Array<{ message: string; type?: string; location?: string }>;
	run: IRun;
}

export interface RunNodeOptions {
	parameters: IDataObject;
	input?: INodeExecutionData[];
	credential?: INodeCredentialsDetails;
	type?: string;
	continueOnFail?: boolean;
	mode?: WorkflowExecuteMode;
}

let executionCounter = 0;

/**
 * Runs workflows of this package's nodes with n8n-core's real execution engine, in process.
 * Credentials persist across runs, as in n8n's database.
 */
export class Harness {
	readonly nodeTypes = new PackageNodeTypes();

	readonly credentials = new TestCredentialsHelper();

	private credentialCounter = 0;

	addCredential(data: ICredentialDataDecryptedObject, type = CREDENTIAL_TYPE) {
		this.credentialCounter += 1;
		return this.credentials.add(String(this.credentialCounter), type, data);
	}

	/** Runs one node fed with `input` (one empty item by default) and returns its output. */
	async runNode(options: RunNodeOptions): Promise<NodeRun> {
		const name = 'Node Under Test';
		const type = options.type ?? ACTION_NODE_TYPE;
		const node: INode = {
			id: 'node-under-test',
			name,
			type,
			typeVersion: 1,
			position: [0, 0],
			parameters: options.parameters as INode['parameters'],
			credentials: options.credential ? { [CREDENTIAL_TYPE]: options.credential } : undefined,
			onError: options.continueOnFail ? 'continueRegularOutput' : 'stopWorkflow',
		};
		const run = await this.runWorkflow({
			nodes: [node],
			connections: {},
			startNode: name,
			input: options.input ?? [{ json: {} }],
			mode: options.mode,
		});
		const taskData = run.data.resultData.runData[name]?.[0];
		return {
			items: taskData?.data?.main?.[0] ?? [],
			error: taskData?.error,
			hints: (taskData?.hints ?? []) as NodeRun['hints'],
			run,
		};
	}

	async runWorkflow(options: {
		nodes: INode[];
		connections: IConnections;
		startNode: string;
		input: INodeExecutionData[];
		mode?: WorkflowExecuteMode;
		staticData?: IDataObject;
	}): Promise<IRun> {
		const mode = options.mode ?? 'manual';
		const workflowData: IWorkflowBase = {
			id: 'harness-workflow',
			name: 'Harness workflow',
			active: false,
			isArchived: false,
			nodes: options.nodes,
			connections: options.connections,
			createdAt: new Date(),
			updatedAt: new Date(),
			activeVersionId: null,
		};
		const workflow = new Workflow({
			id: workflowData.id,
			name: workflowData.name,
			nodes: options.nodes,
			connections: options.connections,
			nodeTypes: this.nodeTypes,
			active: false,
			staticData: options.staticData,
		});
		const startNode = workflow.getNode(options.startNode);
		if (!startNode) throw new Error(`No node named ${options.startNode}`);

		executionCounter += 1;
		const additionalData = this.additionalData(mode, String(executionCounter), workflowData);
		const runExecutionData = createRunExecutionData({
			executionData: {
				nodeExecutionStack: [{ node: startNode, data: { main: [options.input] }, source: null }],
			},
		});
		return await new WorkflowExecute(
			additionalData,
			mode,
			runExecutionData,
		).processRunExecutionData(workflow);
	}

	additionalData(
		mode: WorkflowExecuteMode,
		executionId: string,
		workflowData: IWorkflowBase,
	): IWorkflowExecuteAdditionalData {
		const base = 'https://localhost:5678';
		const unavailable = async () => {
			throw new Error('Not available in the harness');
		};
		return {
			credentialsHelper: this.credentials,
			hooks: new ExecutionLifecycleHooks(mode, executionId, workflowData),
			executionId,
			currentNodeExecutionIndex: 0,
			restApiUrl: `${base}/rest`,
			instanceBaseUrl: base,
			formBaseUrl: `${base}/form`,
			formWaitingBaseUrl: `${base}/form-waiting`,
			formTestBaseUrl: `${base}/form-test`,
			webhookBaseUrl: `${base}/webhook`,
			webhookWaitingBaseUrl: `${base}/webhook-waiting`,
			webhookTestBaseUrl: `${base}/webhook-test`,
			mcpBaseUrl: `${base}/mcp`,
			mcpTestBaseUrl: `${base}/mcp-test`,
			variables: {},
			executeWorkflow: unavailable,
			getRunExecutionData: unavailable,
			getRuntimeCredential: unavailable,
			startRunnerTask: unavailable,
			logAiEvent: () => {},
		} as unknown as IWorkflowExecuteAdditionalData;
	}
}
