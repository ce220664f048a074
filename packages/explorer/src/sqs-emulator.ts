import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildApp } from 'fauxqs';

/** fauxqs's SQS store: the file the FIFO patch (patches/fauxqs+1.9.2.patch in this package) edits. */
const FAUXQS_STORE = fileURLToPath(new URL('sqs/sqsStore.js', import.meta.resolve('fauxqs')));

/** The patch that makes fauxqs's FIFO queues behave as SQS's, shipped in this package. */
export const FIFO_PATCH = fileURLToPath(new URL('../patches/fauxqs+1.9.2.patch', import.meta.url));

export interface RunningSqs {
  readonly endpoint: string;
  /** fauxqs's FIFO queues behave as SQS's: the patch is applied (see `fifoPatchProblem`). */
  readonly fifoPatched: boolean;
  stop(): Promise<void>;
}

/**
 * Starts fauxqs (an SQS emulator) in this process on a free loopback port.
 *
 * SQS clients must set `endpoint` in code: fauxqs's queue URLs name a host that does not resolve,
 * and without a coded endpoint the SDK sends each request to its QueueUrl's host.
 */
export async function startSqsEmulator(fauxqsStore = FAUXQS_STORE): Promise<RunningSqs> {
  // buildApp + our own listen rather than startFauxqs, which always binds 0.0.0.0.
  const app = buildApp({ logger: false });
  const endpoint = await app.listen({ host: '127.0.0.1', port: 0 });
  let stopping: Promise<void> | undefined;
  return {
    endpoint,
    fifoPatched: fifoPatchProblem(fauxqsStore) === undefined,
    // close() also releases pending long polls (fauxqs's preClose hook), so it never waits up to 20 s.
    stop: () => {
      stopping ??= app.close();
      return stopping;
    },
  };
}

/**
 * fauxqs 1.9.2 (and 2.4.1, the latest) hands out one message per FIFO group per receive and puts
 * several expired messages of a group back in reverse order; the patch makes both behave as AWS
 * documents. npm applies it only where a project's postinstall runs patch-package with it.
 * Returns what is wrong and how to fix it, or undefined when the installed fauxqs is patched.
 */
export function fifoPatchProblem(store = FAUXQS_STORE): string | undefined {
  const source = readFileSync(store, 'utf8');
  // Both edits of the patch: a group's messages together, and expired ones back in order.
  const patched = ['patched (patches/fauxqs+1.9.2.patch): no break', 'function sortBySequenceNumber('].every(
    (edit) => source.includes(edit),
  );
  if (patched) return undefined;
  return (
    `fauxqs is not patched (${store}): its FIFO queues would not behave as SQS's (one message per ` +
    'group per receive; expired messages of a group back in reverse order). To explore a FIFO ' +
    `queue, apply the patch this package ships: copy ${FIFO_PATCH} into your project's patches/ ` +
    'folder, add patch-package (npm install --save-dev patch-package) and "postinstall": ' +
    '"patch-package" to your package.json, and run npm install.'
  );
}
