import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildApp } from 'fauxqs';
import type { RunningEmulator } from './running-emulator.js';

/** fauxqs's SQS store, the file patches/fauxqs+1.9.2.patch edits. */
const FAUXQS_STORE = fileURLToPath(new URL('sqs/sqsStore.js', import.meta.resolve('fauxqs')));

/**
 * Starts fauxqs in this process on a free loopback port.
 *
 * SQS clients must set `endpoint` in code (or `useQueueUrlAsEndpoint: false`): fauxqs's queue URLs look like
 * `http://sqs.us-east-1.localhost:<port>/000000000000/<name>`, that host does not resolve, and without a
 * coded endpoint the SDK sends each request to its QueueUrl's host (AWS_ENDPOINT_URL_SQS is not enough).
 * `fauxqsStore` is the file checked for the FIFO patch (a test points it at an unpatched copy).
 */
export async function startSqsEmulator(fauxqsStore = FAUXQS_STORE): Promise<RunningEmulator> {
  assertFifoPatchApplied(fauxqsStore);
  // buildApp + our own listen rather than startFauxqs, which always binds 0.0.0.0.
  const app = buildApp({ logger: false });
  const endpoint = await app.listen({ host: '127.0.0.1', port: 0 });
  let stopping: Promise<void> | undefined;
  return {
    endpoint,
    // close() also releases pending long polls (fauxqs's preClose hook), so it never waits up to 20 s.
    stop: () => {
      stopping ??= app.close();
      return stopping;
    },
  };
}

/**
 * fauxqs 1.9.2 hands out one message per FIFO group per receive and puts several expired messages of
 * a group back in reverse order; patches/fauxqs+1.9.2.patch makes both behave as AWS documents
 * (docs/ordering.md). npm's postinstall applies it; an install without scripts does not, and the
 * FIFO modes would then run on a queue that is not SQS's FIFO.
 */
export function assertFifoPatchApplied(store = FAUXQS_STORE): void {
  const source = readFileSync(store, 'utf8');
  // Both edits of the patch: a group's messages together, and expired ones back in order.
  const patched = ['patched (patches/fauxqs+1.9.2.patch): no break', 'function sortBySequenceNumber('].every(
    (edit) => source.includes(edit),
  );
  if (!patched) {
    throw new Error(
      `fauxqs is not patched (${store}): its FIFO queues would not behave as SQS's. ` +
        'Run `npm ci` (its postinstall runs patch-package with patches/fauxqs+1.9.2.patch), ' +
        'or `npx patch-package` after an install with --ignore-scripts.',
    );
  }
}
