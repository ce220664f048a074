import { fifoPatchProblem, startSqsEmulator as startFauxqs } from '@sqs-delivery-semantics/explorer';
import type { RunningEmulator } from './running-emulator.js';

/**
 * Starts fauxqs in this process on a free loopback port (the explorer package's), refusing an
 * unpatched one: the lab's FIFO modes need fauxqs's FIFO queues to behave as SQS's.
 * `fauxqsStore` is the file checked for the FIFO patch (a test points it at an unpatched copy).
 */
export async function startSqsEmulator(fauxqsStore?: string): Promise<RunningEmulator> {
  assertFifoPatchApplied(fauxqsStore);
  return startFauxqs(fauxqsStore);
}

/**
 * The lab applies packages/explorer/patches/fauxqs+1.9.2.patch in npm's postinstall; an install
 * without scripts does not, and the FIFO modes would then run on a queue that is not SQS's FIFO.
 */
export function assertFifoPatchApplied(store?: string): void {
  const problem = fifoPatchProblem(store);
  if (problem !== undefined) {
    throw new Error(
      `${problem.slice(0, problem.indexOf(':'))}: its FIFO queues would not behave as SQS's. ` +
        'Run `npm ci` (its postinstall runs patch-package with packages/explorer/patches/fauxqs+1.9.2.patch), ' +
        'or `npx patch-package --patch-dir packages/explorer/patches` after an install with --ignore-scripts.',
    );
  }
}
