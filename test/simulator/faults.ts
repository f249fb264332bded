/**
 * Fault injection per route. The first active rule that matches a request's route and method
 * (and passes its probability roll, from a seeded RNG) applies to it; a rule with `times` is
 * removed once used up. Faults apply before authentication, like a gateway in front of the service;
 * with `afterHandling`, the request is handled first and only its answer is lost or replaced.
 */
import { randomUUID } from 'node:crypto';

import { createRandom, type Random } from './random';
import { ROUTES, type ActiveFault, type FaultRule, type RouteName } from './types';

export class FaultInjector {
	private rules: ActiveFault[] = [];
	private random: Random;

	constructor(seed: number | string = 1) {
		this.random = createRandom(`${seed}:faults`);
	}

	add(rule: FaultRule): ActiveFault {
		validateFault(rule);
		const fault: ActiveFault = {
			...rule,
			method: rule.method?.toUpperCase(),
			id: randomUUID(),
			remaining: rule.times ?? null,
			hits: 0,
		};
		this.rules.push(fault);
		return { ...fault };
	}

	remove(id: string): boolean {
		const before = this.rules.length;
		this.rules = this.rules.filter((rule) => rule.id !== id);
		return this.rules.length < before;
	}

	clear() {
		this.rules = [];
	}

	list(): ActiveFault[] {
		return this.rules.map((rule) => ({ ...rule }));
	}

	/** The fault for this request, if any; counts it against the rule's `times`. */
	take(route: RouteName, method: string): ActiveFault | undefined {
		for (const rule of this.rules) {
			if (rule.route !== route) continue;
			if (rule.method !== undefined && rule.method !== method) continue;
			if (rule.skip !== undefined && rule.skip > 0) {
				rule.skip--;
				continue;
			}
			if (rule.probability !== undefined && !this.random.chance(rule.probability)) continue;
			rule.hits++;
			if (rule.remaining !== null) {
				rule.remaining--;
				if (rule.remaining <= 0) this.remove(rule.id);
			}
			return { ...rule };
		}
		return undefined;
	}
}

export function validateFault(rule: FaultRule) {
	if (typeof rule !== 'object' || rule === null) throw new Error('A fault must be an object.');
	if (!ROUTES.includes(rule.route)) {
		throw new Error(
			`Fault route must be one of ${ROUTES.join(', ')}; got '${String(rule.route)}'.`,
		);
	}
	if (rule.method !== undefined && typeof rule.method !== 'string') {
		throw new Error('Fault method must be a string.');
	}
	if (
		rule.status !== undefined &&
		(!Number.isInteger(rule.status) || rule.status < 200 || rule.status > 599)
	) {
		throw new Error(`Fault status must be an integer from 200 to 599; got ${rule.status}.`);
	}
	if (rule.latencyMs !== undefined && !(Number.isFinite(rule.latencyMs) && rule.latencyMs >= 0)) {
		throw new Error('Fault latencyMs must be a number of at least 0.');
	}
	if (rule.times !== undefined && !(Number.isInteger(rule.times) && rule.times >= 1)) {
		throw new Error('Fault times must be an integer of at least 1.');
	}
	if (rule.skip !== undefined && !(Number.isInteger(rule.skip) && rule.skip >= 0)) {
		throw new Error('Fault skip must be an integer of at least 0.');
	}
	if (
		rule.probability !== undefined &&
		!(typeof rule.probability === 'number' && rule.probability >= 0 && rule.probability <= 1)
	) {
		throw new Error('Fault probability must be a number from 0 to 1.');
	}
	if (
		rule.retryAfter !== undefined &&
		!(
			typeof rule.retryAfter === 'string' ||
			(Number.isFinite(rule.retryAfter) && rule.retryAfter >= 0)
		)
	) {
		throw new Error('Fault retryAfter must be seconds (a number) or an HTTP date (a string).');
	}
	if (rule.drop && rule.status !== undefined) {
		throw new Error('A fault either drops the connection or answers with a status, not both.');
	}
	if (rule.afterHandling !== undefined && typeof rule.afterHandling !== 'boolean') {
		throw new Error('Fault afterHandling must be a boolean.');
	}
	if (
		rule.afterHandling &&
		!rule.drop &&
		rule.status === undefined &&
		rule.latencyMs === undefined
	) {
		throw new Error('A fault with afterHandling needs drop, status or latencyMs.');
	}
	if (!rule.drop && rule.status === undefined && rule.latencyMs === undefined) {
		throw new Error('A fault needs at least one of status, drop or latencyMs.');
	}
}
