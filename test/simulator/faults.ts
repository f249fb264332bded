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

	/** What lets each request a `hold` fault keeps go on, by the fault's id (true: removed; false: closing). */
	private held = new Map<string, Array<(goOn: boolean) => void>>();

	/** Faults removed by the test (not used up): a request they hold goes on at once. */
	private released = new Set<string>();

	private closed = false;

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

	/** Removes a fault; the requests it holds go on. */
	remove(id: string): boolean {
		const before = this.rules.length;
		this.rules = this.rules.filter((rule) => rule.id !== id);
		this.release(id, true);
		return this.rules.length < before;
	}

	clear() {
		for (const rule of this.rules) this.released.add(rule.id);
		this.rules = [];
		for (const id of [...this.held.keys()]) this.release(id, true);
	}

	/** Resolves once the `hold` fault `id` is removed (true), or at once when closing (false). */
	hold(id: string): Promise<boolean> {
		if (this.closed) return Promise.resolve(false);
		if (this.released.has(id)) return Promise.resolve(true);
		return new Promise((goOn) => this.held.set(id, [...(this.held.get(id) ?? []), goOn]));
	}

	/** The simulator closes: every held request ends. */
	close() {
		this.closed = true;
		for (const id of [...this.held.keys()]) this.release(id, false);
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
				// Used up: it applies no more, and what it holds stays held until the test removes it.
				if (rule.remaining <= 0) this.rules = this.rules.filter((other) => other !== rule);
			}
			return { ...rule };
		}
		return undefined;
	}

	private release(id: string, goOn: boolean) {
		if (goOn) this.released.add(id);
		for (const release of this.held.get(id) ?? []) release(goOn);
		this.held.delete(id);
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
	if (rule.hold !== undefined && typeof rule.hold !== 'boolean') {
		throw new Error('Fault hold must be a boolean.');
	}
	const acts = rule.drop || rule.status !== undefined || rule.latencyMs !== undefined || rule.hold;
	if (rule.afterHandling && !acts) {
		throw new Error('A fault with afterHandling needs drop, status, latencyMs or hold.');
	}
	if (!acts) {
		throw new Error('A fault needs at least one of status, drop, latencyMs or hold.');
	}
}
