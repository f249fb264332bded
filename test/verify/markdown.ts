/* eslint-disable @n8n/community-nodes/no-restricted-imports */
/**
 * The documentation checks of `npm run verify`, over README.md, CONTRIBUTING.md and docs/**\/*.md:
 * links between them (relative, or absolute into this repository, as the README needs them for
 * npm's page) reach an existing file and heading; images exist and the README's are absolute;
 * tables stay narrow; the messages the troubleshooting quotes are found.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

export interface DocFile {
	/** Path from the repository root, with forward slashes. */
	path: string;
	text: string;
}

export interface DocLink {
	file: string;
	line: number;
	target: string;
	image: boolean;
}

/** A link resolved to a file of this repository (and a heading in it), or left to the web. */
export type LinkTarget = { local: false } | { local: true; path: string; anchor: string };

/** The documents the checks cover: README.md, CONTRIBUTING.md and every Markdown file under docs/. */
export function documentationFiles(repository: string): DocFile[] {
	const found: string[] = ['README.md', 'CONTRIBUTING.md'].filter((file) =>
		existsSync(join(repository, file)),
	);
	const walk = (dir: string) => {
		if (!existsSync(join(repository, dir))) return;
		for (const entry of readdirSync(join(repository, dir), { withFileTypes: true })) {
			const path = `${dir}/${entry.name}`;
			if (entry.isDirectory()) walk(path);
			else if (entry.name.endsWith('.md')) found.push(path);
		}
	};
	walk('docs');
	return found.map((path) => ({ path, text: readFileSync(join(repository, path), 'utf8') }));
}

/**
 * The Markdown's lines outside fenced code: `raw` as written, `text` with inline code blanked (its
 * brackets are not links).
 */
function proseLines(markdown: string): Array<{ line: number; raw: string; text: string }> {
	const lines: Array<{ line: number; raw: string; text: string }> = [];
	let fenced = false;
	markdown.split('\n').forEach((raw, index) => {
		if (/^\s*(```|~~~)/.test(raw)) {
			fenced = !fenced;
			return;
		}
		if (fenced) return;
		const text = raw.replace(/`[^`]*`/g, (code) => ' '.repeat(code.length));
		lines.push({ line: index + 1, raw, text });
	});
	return lines;
}

/** GitHub's heading anchors of a Markdown file (lower case, punctuation dropped, spaces to -). */
export function markdownAnchors(markdown: string): Set<string> {
	const anchors = new Set<string>();
	const seen = new Map<string, number>();
	for (const { raw } of proseLines(markdown)) {
		const heading = /^#{1,6}\s+(.*)$/.exec(raw);
		if (!heading) continue;
		const base = heading[1]
			.trim()
			.toLowerCase()
			.replace(/[^\p{L}\p{N}\s_-]/gu, '')
			.replace(/\s/g, '-');
		const count = seen.get(base) ?? 0;
		seen.set(base, count + 1);
		anchors.add(count === 0 ? base : `${base}-${count}`);
	}
	for (const match of markdown.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(match[1]);
	return anchors;
}

/** Every link and image of a document: inline, reference definitions, and HTML `href`/`src`. */
export function markdownLinks(file: DocFile): DocLink[] {
	const links: DocLink[] = [];
	const add = (line: number, target: string, image: boolean) =>
		links.push({ file: file.path, line, target: target.replace(/^<|>$/g, ''), image });
	for (const { line, text } of proseLines(file.text)) {
		// Link text may hold one level of brackets ("[item N]") or an image.
		for (const match of text.matchAll(/(!?)\[(?:[^[\]]|\[[^[\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)/g)) {
			add(line, match[2], match[1] === '!');
		}
		for (const match of text.matchAll(/!\[[^\]]*\]\(\s*(<[^>]*>|[^)\s]+)/g)) {
			if (!links.some((link) => link.line === line && link.target === match[1]))
				add(line, match[1], true);
		}
		const definition = /^\s{0,3}\[[^\]]+\]:\s*(\S+)/.exec(text);
		if (definition) add(line, definition[1], false);
		for (const match of text.matchAll(/<(img|a)\s[^>]*?(src|href)="([^"]+)"/g)) {
			add(line, match[3], match[1] === 'img');
		}
	}
	return links;
}

/**
 * Where a link leads. Relative targets resolve against the document's folder; absolute ones into
 * this repository (`<repository>`, `…/blob|tree/<ref>/<path>`, raw.githubusercontent.com) resolve
 * to the same files; anything else is the web's business.
 */
export function resolveLink(target: string, fromFile: string, repositoryUrl: string): LinkTarget {
	const [address, anchor = ''] = target.split('#', 2);
	if (/^[a-z][a-z0-9+.-]*:/i.test(address)) {
		const repo = new URL(repositoryUrl);
		const [owner, name] = repo.pathname.split('/').filter(Boolean);
		let url: URL;
		try {
			url = new URL(target);
		} catch {
			return { local: false };
		}
		const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
		const hash = decodeURIComponent(url.hash.replace(/^#/, ''));
		if (url.hostname === 'raw.githubusercontent.com' && parts[0] === owner && parts[1] === name) {
			return { local: true, path: parts.slice(3).join('/'), anchor: hash };
		}
		if (url.hostname !== repo.hostname || parts[0] !== owner || parts[1] !== name) {
			return { local: false };
		}
		if (parts.length === 2) return { local: true, path: 'README.md', anchor: hash };
		if ((parts[2] === 'blob' || parts[2] === 'tree') && parts.length >= 4) {
			return { local: true, path: parts.slice(4).join('/') || '.', anchor: hash };
		}
		return { local: false }; // issues, releases, actions…
	}
	if (address === '') return { local: true, path: fromFile, anchor: decodeURIComponent(anchor) };
	const path = normalize(join(dirname(fromFile), decodeURIComponent(address))).replace(/\\/g, '/');
	return { local: true, path, anchor: decodeURIComponent(anchor) };
}

/** Broken links between the documents: a missing file, a path out of the repository, an unknown heading. */
export function brokenLinks(repository: string, files: DocFile[], repositoryUrl: string): string[] {
	const anchorsOf = new Map<string, Set<string>>();
	const anchors = (path: string) => {
		if (!anchorsOf.has(path)) {
			anchorsOf.set(path, markdownAnchors(readFileSync(join(repository, path), 'utf8')));
		}
		return anchorsOf.get(path) as Set<string>;
	};
	const problems: string[] = [];
	for (const file of files) {
		problems.push(...undefinedReferences(file));
		for (const link of markdownLinks(file)) {
			const target = resolveLink(link.target, file.path, repositoryUrl);
			if (!target.local) continue;
			const where = `${link.file}:${link.line}`;
			const full = join(repository, target.path);
			if (relative(repository, full).startsWith('..')) {
				problems.push(`${where} links outside the repository: ${link.target}`);
			} else if (!existsSync(full)) {
				problems.push(`${where} links to ${target.path}, which does not exist (${link.target})`);
			} else if (
				target.anchor &&
				statSync(full).isFile() &&
				target.path.endsWith('.md') &&
				!anchors(target.path).has(target.anchor)
			) {
				problems.push(`${where} links to ${target.path}#${target.anchor}: no such heading`);
			}
		}
	}
	return problems;
}

/** Reference links (`[text][name]`) whose name no `[name]: target` line defines: shown as plain text. */
function undefinedReferences(file: DocFile): string[] {
	const lines = proseLines(file.text);
	const defined = new Set(
		lines.flatMap(({ text }) => {
			const definition = /^\s{0,3}\[([^\]]+)\]:/.exec(text);
			return definition ? [definition[1].toLowerCase()] : [];
		}),
	);
	const problems: string[] = [];
	for (const { line, text } of lines) {
		for (const match of text.matchAll(/\[((?:[^[\]]|\[[^[\]]*\])+)\]\[([^\]]*)\]/g)) {
			const name = (match[2] || match[1]).toLowerCase();
			if (!defined.has(name))
				problems.push(`${file.path}:${line}: the link [${name}] is defined nowhere`);
		}
	}
	return problems;
}

/** The cells of a Markdown table row, or undefined for a line that is not one. */
function tableCells(line: string): string[] | undefined {
	if (!/^\s*\|.*\|\s*$/.test(line)) return undefined;
	return line
		.trim()
		.slice(1, -1)
		.split(/(?<!\\)\|/)
		.map((cell) => cell.trim());
}

/** Table rows longer than `maxRow` characters, or with a cell longer than `maxCell`. */
export function wideTables(files: DocFile[], maxRow: number, maxCell: number): string[] {
	const problems: string[] = [];
	for (const file of files) {
		for (const { line, raw } of proseLines(file.text)) {
			const cells = tableCells(raw);
			if (!cells) continue;
			const row = raw.trimEnd().length;
			if (row > maxRow) {
				problems.push(`${file.path}:${line}: a table row of ${row} characters (at most ${maxRow})`);
			}
			const widest = Math.max(...cells.map((cell) => cell.length));
			if (widest > maxCell) {
				problems.push(
					`${file.path}:${line}: a table cell of ${widest} characters (at most ${maxCell})`,
				);
			}
		}
	}
	return problems;
}

/**
 * The messages a document quotes as troubleshooting entries: the italic text in a table row's first
 * cell (README's "Troubleshooting" section) and headings written as a quotation ("…"), as
 * docs/troubleshooting.md has them.
 */
export function quotedMessages(markdown: string): string[] {
	const quotes: string[] = [];
	for (const { raw } of proseLines(markdown)) {
		const heading = /^#{2,6}\s+"(.+)"\s*$/.exec(raw);
		if (heading) quotes.push(heading[1].trim());
		const firstCell = /^\|([^|]*)\|/.exec(raw)?.[1] ?? '';
		for (const match of firstCell.matchAll(/(?<![\w*])[*_]([^*_]+)[*_](?![\w*])/g)) {
			quotes.push(match[1].trim());
		}
	}
	return quotes;
}

/** The part of a document under a level-2 heading, up to the next one. */
export function section(markdown: string, heading: string): string {
	const lines = markdown.split('\n');
	const start = lines.findIndex((line) => line.trim() === `## ${heading}`);
	if (start < 0) return '';
	const end = lines.findIndex((line, index) => index > start && /^## /.test(line));
	return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}
