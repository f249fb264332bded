/**
 * `npm test` runs the unit and integration tests; `npm run test:e2e` (JEST_SUITE=e2e) the
 * end-to-end suite against a real n8n.
 * @type {import('jest').Config}
 */
const endToEnd = process.env.JEST_SUITE === 'e2e';

module.exports = {
	testEnvironment: 'node',
	rootDir: __dirname,
	testMatch: endToEnd
		? ['<rootDir>/test/e2e/**/*.test.ts']
		: ['<rootDir>/test/unit/**/*.test.ts', '<rootDir>/test/integration/**/*.test.ts'],
	transform: {
		'^.+\\.ts$': ['ts-jest', { tsconfig: 'test/tsconfig.json' }],
	},
	setupFiles: ['<rootDir>/test/harness/setup-env.ts'],
	testTimeout: endToEnd ? 10 * 60_000 : 60_000,
};
