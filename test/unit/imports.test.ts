/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/**
 * The import rules of CONTRIBUTING.md ("The product code, module by module"), held against every
 * relative import in nodes/ and credentials/.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const NODE_DIR = 'nodes/InvoicingAssets';

type Part =
	| 'node file'
	| 'credential'
	| 'actions'
	| 'methods'
	| 'trigger'
	| 'shared'
	| 'transport'
	| 'contract';

/** What each part may import, besides itself (contract.ts imports nothing, shared/ only contract.ts). */
const MAY_IMPORT: Record<Part, Part[]> = {
	'node file': ['actions', 'methods', 'trigger', 'shared', 'transport', 'contract'],
	credential: ['shared', 'transport', 'contract'],
	actions: ['actions', 'shared', 'transport', 'contract'],
	methods: ['methods', 'shared', 'transport', 'contract'],
	trigger: ['trigger', 'shared', 'transport', 'contract'],
	shared: ['contract'],
	transport: ['transport', 'contract'],
	contract: [],
};

function partOf(file: string): Part | undefined {
	if (file.startsWith('credentials/')) return 'credential';
	if (!file.startsWith(`${NODE_DIR}/`)) return undefined;
	const inner = file.slice(NODE_DIR.length + 1);
	if (inner === 'transport/contract.ts') return 'contract';
	const folder = inner.split('/')[0];
	if (!inner.includes('/')) return 'node file';
	return (['actions', 'methods', 'trigger', 'shared', 'transport'] as const).find(
		(part) => part === folder,
	);
}

function productFiles(): string[] {
	return ['nodes', 'credentials'].flatMap((folder) =>
		readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
			.filter((file) => file.endsWith('.ts'))
			.map((file) => `${folder}/${file}`),
	);
}

/** The product files a file imports (relative imports only), as repository paths. */
function importsOf(file: string, known: Set<string>): string[] {
	const text = readFileSync(join(ROOT, file), 'utf8');
	const specifiers = [...text.matchAll(/from '(\.{1,2}\/[^']*)'/g)].map((match) => match[1]);
	return specifiers.map((specifier) => {
		const target = normalize(join(dirname(file), specifier));
		const resolved = [`${target}.ts`, `${target}/index.ts`].find((path) => known.has(path));
		return resolved ?? relative(ROOT, join(ROOT, target));
	});
}

test('imports in nodes/ and credentials/ run only the ways CONTRIBUTING.md allows', () => {
	const files = productFiles();
	const known = new Set(files);
	const broken: string[] = [];
	for (const file of files) {
		const from = partOf(file);
		for (const target of importsOf(file, known)) {
			const to = partOf(target);
			const allowed = from !== undefined && to !== undefined && MAY_IMPORT[from].includes(to);
			if (!allowed) broken.push(`${file} (${from}) imports ${target} (${to ?? 'unknown'})`);
		}
	}
	expect(broken).toEqual([]);
	// The files were found: an empty list would pass any rule.
	expect(files.length).toBeGreaterThan(30);
});
