/* eslint-disable @n8n/community-nodes/no-restricted-globals */
/**
 * Measures the peak RSS of one Invoice Get Many, Return All, in a fresh process, so that no
 * earlier benchmark run inflates it: `node` runs the node through n8n-core, `undici` the
 * keep-alive paging loop. Started by the benchmark with the simulator's state in BENCH_SIM_STATE;
 * answers `{ baselineMb, peakMb, records }` over IPC.
 */
import '../harness/setup-env';

import { Harness } from '../harness/workflow';
import type { SimulatorState } from '../simulator';
import { nodeRun, rawListAll } from './support';

async function main() {
	const state = JSON.parse(process.env.BENCH_SIM_STATE ?? '{}') as SimulatorState;
	const client = process.argv[2];
	const harness = new Harness();
	const baselineMb = process.memoryUsage.rss() / 2 ** 20;
	const records =
		client === 'node'
			? await nodeRun(
					harness,
					state,
					{ resource: 'invoice', operation: 'getAll', returnAll: true },
					[{ json: {} }],
				)
			: await rawListAll(state);
	// maxRSS is in kilobytes, the highest resident set size of this process so far.
	const peakMb = process.resourceUsage().maxRSS / 1024;
	process.send?.({ baselineMb, peakMb, records }, undefined, {}, () => process.exit(0));
}

main().catch((error: Error) => {
	process.stderr.write(`${error.stack ?? error.message}\n`);
	process.exit(1);
});
