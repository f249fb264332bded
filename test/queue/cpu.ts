/* eslint-disable @n8n/community-nodes/no-restricted-imports */
/**
 * CPU time used by process groups, from /proc: what a load cost, whatever else the machine was
 * doing meanwhile (wall-clock rates on a shared 2-core machine move with the neighbours' load).
 */
import { readFileSync, readdirSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) used so far by the live processes of these process groups. */
export function cpuSecondsOfGroups(pgids: number[]): number {
	const groups = new Set(pgids);
	let ticks = 0;
	for (const entry of readdirSync('/proc')) {
		if (!/^\d+$/.test(entry)) continue;
		try {
			const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
			const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
			// fields[0] is field 3 (state): pgrp is field 5, utime 14, stime 15.
			if (groups.has(Number(fields[2]))) ticks += Number(fields[11]) + Number(fields[12]);
		} catch {
			// the process ended while we looked
		}
	}
	return ticks / TICKS_PER_SECOND;
}
