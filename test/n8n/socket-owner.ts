/* eslint-disable @n8n/community-nodes/no-restricted-imports */
/**
 * Which local process sent a request: the server sees the client's source port; procfs maps that
 * port to the socket's inode (/proc/net/tcp, tcp6) and the inode to the process holding it
 * (/proc/<pid>/fd). Only while the connection is open, so servers ask as a request arrives.
 * Linux only; processes of other users are not readable and are skipped.
 */
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

/** The inodes of open TCP sockets whose local port is `port`. */
function socketInodes(port: number): Set<string> {
	const inodes = new Set<string>();
	for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
		let text = '';
		try {
			text = readFileSync(table, 'utf8');
		} catch {
			continue;
		}
		for (const line of text.split('\n').slice(1)) {
			const fields = line.trim().split(/\s+/);
			if (fields.length < 10) continue;
			const localPort = parseInt(fields[1].split(':').pop() ?? '', 16);
			const inode = fields[9];
			if (localPort === port && inode !== '0') inodes.add(inode);
		}
	}
	return inodes;
}

/** The pid of the process holding the TCP socket bound to local `port`, if one is found. */
export function processOfLocalPort(port: number): number | undefined {
	const inodes = socketInodes(port);
	if (inodes.size === 0) return undefined;
	for (const entry of readdirSync('/proc')) {
		if (!/^\d+$/.test(entry)) continue;
		let fds: string[];
		try {
			fds = readdirSync(`/proc/${entry}/fd`);
		} catch {
			continue; // another user's process, or it ended
		}
		for (const fd of fds) {
			let target: string;
			try {
				target = readlinkSync(`/proc/${entry}/fd/${fd}`);
			} catch {
				continue;
			}
			const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
			if (inode && inodes.has(inode)) return Number(entry);
		}
	}
	return undefined;
}

/** The process group of `pid` (an n8n started by N8nInstance leads its own group). */
export function processGroupOf(pid: number): number | undefined {
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
		return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
	} catch {
		return undefined;
	}
}
