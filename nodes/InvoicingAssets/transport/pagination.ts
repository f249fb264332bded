import { FIRST_PAGE, MAX_PAGE_SIZE } from './contract';

/**
 * The page to ask for next so that no more than `remaining` records come back, with
 * numbered pages: the page size must divide the number of records already read.
 */
export function nextPage(alreadyRead: number, remaining: number) {
	let pageSize = Math.max(1, Math.min(MAX_PAGE_SIZE, remaining));
	while (alreadyRead % pageSize !== 0) pageSize -= 1;
	return { page: FIRST_PAGE + alreadyRead / pageSize, pageSize };
}
