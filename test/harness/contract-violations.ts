/**
 * Jest setup (setupFilesAfterEnv): a test during which a simulator of this process saw a
 * request, an answer or a delivery that breaks docs/service-contract.openapi.yaml fails, with
 * the route and the schema path. Deliberate deviations are marked (test/simulator/contract-check.ts).
 */
import { describeViolations, takeContractViolations } from '../simulator/contract-check';

function assertNoContractViolations() {
	const violations = takeContractViolations();
	if (violations.length > 0) throw new Error(describeViolations(violations));
}

beforeEach(assertNoContractViolations);
afterEach(assertNoContractViolations);
afterAll(assertNoContractViolations);
