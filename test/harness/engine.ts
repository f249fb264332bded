/* eslint-disable @n8n/community-nodes/no-restricted-globals */
/**
 * Which n8n engine the in-process suite runs on (jest.config.js, N8N_ENGINE). A test that needs
 * what only the 2.x engine gives a node is declared with `testNeeding2x`, naming why: on the 1.x
 * engine it is skipped, and docs/compatibility.md states the difference for users.
 */
export const ENGINE = process.env.N8N_ENGINE === '1.x' ? '1.x' : '2.x';

/** n8n 1.x's execution engine reports parameter issues without the parameter's message. */
export const PARAMETER_ISSUES_ARE_NAMED = ENGINE === '2.x';

/** n8n 1.x gives a poll no budget (getPollBudgetMs came with 2.38); the trigger then takes its own bound. */
export const POLL_BUDGET_REACHES_THE_NODE = ENGINE === '2.x';

/** n8n 1.x's NodeApiError has no `failure` (cause, Retry-After) for its poll scheduler to read. */
export const ERRORS_TELL_N8N_HOW_LONG_TO_WAIT = ENGINE === '2.x';

export const testNeeding2x = (available: boolean) => (available ? test : test.skip);
