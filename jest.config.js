/**
 * `npm test` runs the unit and integration tests; `npm run test:e2e` (JEST_SUITE=e2e) the
 * end-to-end suite against a real n8n.
 *
 * `N8N_ENGINE=1.x` (`npm run test:engine-1x`) runs the tests of the action node, the credential
 * and the trigger on the n8n-core / n8n-workflow of the n8n 1.x line (the devDependency aliases
 * n8n-core-v1 and n8n-workflow-v1, pinned to the versions n8n 1.123.x ships): the same tests, the
 * same assertions, only the engine differs. The simulator's own tests, those of the tools for a
 * real n8n (test/unit/n8n, test/integration/n8n) and the Polling Trigger's core in simulated time
 * (test/unit/trigger/polling, test/unit/harness) need no engine and run once.
 * n8n-core 1.x leaves a handle open after the last test (Jest then waits forever; the same tests
 * on 2.x exit), so that script passes --forceExit. Tests that need what only the 2.x engine gives
 * a node are declared with test/harness/engine.ts and skipped there, naming why.
 * @type {import('jest').Config}
 */
const endToEnd = process.env.JEST_SUITE === 'e2e';
/** `npm run test:queue` (JEST_SUITE=queue): the scenario on n8n's queue mode, test/queue. */
const queueMode = process.env.JEST_SUITE === 'queue';
/** `npm run test:n8n-1x` (JEST_SUITE=matrix): the reduced scenario on another n8n release, test/e2e/matrix. */
const matrix = process.env.JEST_SUITE === 'matrix';
const engine = process.env.N8N_ENGINE ?? '2.x';
if (engine !== '2.x' && engine !== '1.x') {
	throw new Error(`N8N_ENGINE must be 2.x or 1.x, not ${engine}`);
}
const engine1x = engine === '1.x' && !endToEnd && !queueMode && !matrix;

module.exports = {
	testEnvironment: 'node',
	rootDir: __dirname,
	testMatch: queueMode
		? ['<rootDir>/test/queue/**/*.test.ts']
		: matrix
			? ['<rootDir>/test/e2e/matrix/**/*.test.ts']
			: endToEnd
				? ['<rootDir>/test/e2e/**/*.test.ts']
				: ['<rootDir>/test/unit/**/*.test.ts', '<rootDir>/test/integration/**/*.test.ts'],
	testPathIgnorePatterns: engine1x
		? [
				'/node_modules/',
				'<rootDir>/test/integration/simulator/',
				'<rootDir>/test/unit/simulator/',
				'<rootDir>/test/integration/n8n/',
				'<rootDir>/test/unit/n8n/',
				// The Polling Trigger's core in simulated time, and its tools: no n8n engine runs there
				// (the HTTP polling tests run the trigger on both engines).
				'<rootDir>/test/unit/trigger/polling/',
				'<rootDir>/test/unit/harness/',
			]
		: matrix
			? ['/node_modules/']
			: ['/node_modules/', '<rootDir>/test/e2e/matrix/'],
	moduleNameMapper: engine1x
		? {
				'^n8n-core$': '<rootDir>/node_modules/n8n-core-v1',
				'^n8n-workflow$': '<rootDir>/node_modules/n8n-workflow-v1',
			}
		: {},
	transform: {
		'^.+\\.ts$': ['ts-jest', { tsconfig: 'test/tsconfig.json' }],
	},
	globalSetup: '<rootDir>/test/harness/global-setup.ts',
	globalTeardown: '<rootDir>/test/harness/global-teardown.ts',
	setupFiles: ['<rootDir>/test/harness/setup-env.ts'],
	// A test during which the simulator saw a request, answer or delivery outside the contract fails.
	setupFilesAfterEnv: ['<rootDir>/test/harness/contract-violations.ts'],
	testTimeout: queueMode ? 20 * 60_000 : endToEnd || matrix ? 10 * 60_000 : 60_000,
};
