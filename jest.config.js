/** @type {import('jest').Config} */
const shared = {
	testEnvironment: 'node',
	rootDir: __dirname,
	transform: {
		'^.+\\.ts$': ['ts-jest', { tsconfig: 'test/tsconfig.json' }],
	},
	setupFiles: ['<rootDir>/test/harness/setup-env.ts'],
};

/** `npm test` runs the first project; `npm run test:e2e` the second, against a real n8n. */
module.exports = {
	testTimeout: 60_000,
	projects: [
		{
			...shared,
			displayName: 'tests',
			testMatch: ['<rootDir>/test/unit/**/*.test.ts', '<rootDir>/test/integration/**/*.test.ts'],
		},
		{
			...shared,
			displayName: 'e2e',
			testMatch: ['<rootDir>/test/e2e/**/*.test.ts'],
		},
	],
};
