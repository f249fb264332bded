import type { INodeProperties } from 'n8n-workflow';

import type { Operation } from '../types';

export const operations: Record<string, Operation> = {};

export const description: INodeProperties[] = [];
