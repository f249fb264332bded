/** @type {import('jest').Config} */
module.exports = {
	testEnvironment: 'node',
	roots: ['<rootDir>/test'],
	testMatch: ['**/test/unit/**/*.test.ts', '**/test/integration/**/*.test.ts'],
	transform: {
		'^.+\\.ts$': ['ts-jest', { tsconfig: 'test/tsconfig.json' }],
	},
	setupFiles: ['<rootDir>/test/harness/setup-env.ts'],
	testTimeout: 60_000,
};
