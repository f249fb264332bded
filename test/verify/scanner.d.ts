/** The part of `@n8n/scan-community-package` (an ES module without types) that `verify.ts` uses. */
declare module '@n8n/scan-community-package/scanner/scanner.mjs' {
	export interface AnalysisResult {
		passed: boolean;
		message?: string;
		/** ESLint's "stylish" report, present when the analysis failed. */
		details?: string;
		error?: unknown;
	}

	/** The globs the scanner uses for a package's source checkout. */
	export const SOURCE_FILE_PATTERNS: string[];

	/** Lints the files of `packageDir` that match `filePatterns` with n8n's scan rules. */
	export function analyzePackage(
		packageDir: string,
		filePatterns?: string[],
	): Promise<AnalysisResult>;
}
