/** A small seeded PRNG (mulberry32): the same seed always gives the same sequence. */
export interface Random {
	/** A float in [0, 1). */
	next(): number;
	/** An integer in [min, max], both inclusive. */
	int(min: number, max: number): number;
	/** True with probability `p`. */
	chance(p: number): boolean;
	pick<T>(items: readonly T[]): T;
}

export function createRandom(seed: number | string): Random {
	let state = typeof seed === 'number' ? seed >>> 0 : hashText(seed);
	const next = () => {
		state = (state + 0x6d2b79f5) >>> 0;
		let t = state;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
	const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
	return {
		next,
		int,
		chance: (p) => next() < p,
		pick: (items) => {
			if (items.length === 0) throw new Error('Cannot pick from an empty list.');
			return items[int(0, items.length - 1)];
		},
	};
}

/** FNV-1a, to turn a text seed into a 32-bit number. */
function hashText(text: string): number {
	let hash = 0x811c9dc5;
	for (let i = 0; i < text.length; i++) {
		hash ^= text.charCodeAt(i);
		hash = Math.imul(hash, 0x01000193);
	}
	return hash >>> 0;
}
