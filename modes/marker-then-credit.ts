import { twoWritesMode } from './families/two-writes-lab.js';

/**
 * marker-then-credit: a teaching mode, the mistake of modes/teaching/two-writes.ts (DO NOT COPY), as the lab
 * runs it (modes/families/two-writes-lab.ts). `npm run explore -- --modes marker-then-credit` shows the steps
 * where it breaks.
 */
export const consumer = twoWritesMode('marker-then-credit');
export const { handler } = consumer;
