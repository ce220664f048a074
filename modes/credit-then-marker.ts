import { twoWritesMode } from './families/two-writes-lab.js';

/**
 * credit-then-marker: a teaching mode, the mistake of modes/teaching/two-writes.ts (DO NOT COPY), as the lab
 * runs it (modes/families/two-writes-lab.ts). `npm run explore -- --modes credit-then-marker` shows the steps
 * where it breaks.
 */
export const consumer = twoWritesMode('credit-then-marker');
export const { handler } = consumer;
