/**
 * `npm test` runs the unit and integration tests; `npm run test:e2e` (JEST_SUITE=e2e) the
 * end-to-end suite against a real n8n.
 * @type {import('jest').Config}
 */
const endToEnd = process.env.JEST_SUITE === 'e2e';
/** `npm run test:queue` (JEST_SUITE=queue): the scenario on n8n's queue mode, test/queue. */
const queueMode = process.env.JEST_SUITE === 'queue';

module.exports = {
	testEnvironment: 'node',
	rootDir: __dirname,
	testMatch: queueMode
		? ['<rootDir>/test/queue/**/*.test.ts']
		: endToEnd
			? ['<rootDir>/test/e2e/**/*.test.ts']
			: ['<rootDir>/test/unit/**/*.test.ts', '<rootDir>/test/integration/**/*.test.ts'],
	transform: {
		'^.+\\.ts$': ['ts-jest', { tsconfig: 'test/tsconfig.json' }],
	},
	globalSetup: '<rootDir>/test/harness/global-setup.ts',
	globalTeardown: '<rootDir>/test/harness/global-teardown.ts',
	setupFiles: ['<rootDir>/test/harness/setup-env.ts'],
	// A test during which the simulator saw a request, answer or delivery outside the contract fails.
	setupFilesAfterEnv: ['<rootDir>/test/harness/contract-violations.ts'],
	testTimeout: queueMode ? 20 * 60_000 : endToEnd ? 10 * 60_000 : 60_000,
};
