/** The figures of a reliability run and the one table that shows them. */

export interface Figure {
	/** The item, e.g. "1 soak". */
	item: string;
	name: string;
	value: string;
	goal: string;
	/** true/false when judged against the goal; null when only reported (e.g. speed in CI size). */
	met: boolean | null;
	/** Why it failed, or what else to know; printed under the table. */
	note?: string;
}

export class Report {
	readonly figures: Figure[] = [];

	add(figure: Figure): Figure {
		this.figures.push(figure);
		return figure;
	}

	/** A judged figure. */
	check(
		item: string,
		name: string,
		value: string | number,
		goal: string,
		met: boolean,
		note?: string,
	) {
		return this.add({ item, name, value: String(value), goal, met, note });
	}

	/** A figure without a goal, or one not judged in this mode. */
	info(item: string, name: string, value: string | number, goal = '—', note?: string) {
		return this.add({ item, name, value: String(value), goal, met: null, note });
	}

	get passed(): number {
		return this.figures.filter((figure) => figure.met === true).length;
	}

	get failed(): number {
		return this.figures.filter((figure) => figure.met === false).length;
	}

	/** The table; `redact` is applied to every value and note (e.g. to withhold a leaked secret). */
	table(redact: (text: string) => string = (text) => text): string {
		const order = (figure: Figure) => Number.parseInt(figure.item, 10) || 99;
		const sorted = this.figures
			.map((figure, index) => ({ figure, index }))
			.sort((a, b) => order(a.figure) - order(b.figure) || a.index - b.index)
			.map(({ figure }) => figure);
		const rows = sorted.map((figure) => [
			figure.item,
			figure.name,
			redact(figure.value),
			figure.goal,
			figure.met === null ? 'reported' : figure.met ? 'met' : '**NOT MET**',
		]);
		const lines = [
			'| # | figure | value | goal | met |',
			'|---|---|---:|---|---|',
			...rows.map((row) => `| ${row.map((cell) => cell.replace(/\|/g, '\\|')).join(' | ')} |`),
		];
		const notes = sorted
			.filter((figure) => figure.note)
			.map((figure) => `- ${figure.item} / ${figure.name}: ${redact(figure.note ?? '')}`);
		return [...lines, ...(notes.length ? ['', 'Notes:', ...notes] : [])].join('\n');
	}

	/** The line .ci/run counts, in jest's format. */
	testsLine(): string {
		return `Tests: ${this.failed} failed, ${this.passed} passed, ${this.passed + this.failed} total`;
	}
}

/** The p-th percentile (0–100) of the values, nearest rank. */
export function percentile(values: number[], p: number): number {
	if (values.length === 0) return Number.NaN;
	const sorted = [...values].sort((a, b) => a - b);
	const rank = Math.ceil((p / 100) * sorted.length);
	return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export function median(values: number[]): number {
	return percentile(values, 50);
}

export const ms = (value: number) => `${value.toFixed(value < 10 ? 1 : 0)} ms`;
export const ratio = (value: number) => value.toFixed(2);
export const count = (value: number) => value.toLocaleString('en-US');
