import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { readQueueDepth } from '../../harness/environments/queue-depth.js';
import { type Bundles, bundleHandlers } from '../../harness/local-aws/bundling/bundle.js';
import type { RunningEmulator } from '../../harness/local-aws/emulators/index.js';
import { startSqsEmulator } from '../../harness/local-aws/emulators/sqs-emulator.js';
import {
  LocalEventSourceMapping,
  type MappingFaults,
} from '../../harness/local-aws/lambda-runtime/event-source-mapping.js';
import { LocalFunction } from '../../harness/local-aws/lambda-runtime/local-function.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../harness/local-aws/local-identity.js';

/** The scripted handler, told by its environment how long to take and what to answer. */
export const SCRIPTED_HANDLER = fileURLToPath(new URL('../fixtures/scripted-handler.mjs', import.meta.url));
const RECORDING_HANDLER = fileURLToPath(
  new URL('../integration/lambda-runtime-fixtures/recording-handler.mjs', import.meta.url),
);
export const VISIBILITY_SECONDS = 2;

/** One invocation as the recording handler wrote it down. */
export interface RecordedInvocation {
  readonly pid: number;
  readonly startedAt: number;
  readonly endedAt: number;
  readonly records: ReadonlyArray<{
    readonly messageId: string;
    readonly receiveCount: number;
    readonly receiptHandle: string;
    readonly body: string;
  }>;
}

export interface MappingOptions {
  batchSize?: number;
  maxConcurrency?: number;
  reportBatchItemFailures?: boolean;
  delayMs?: number;
  /** The recording handler, writing to this file, instead of the scripted one. */
  recordTo?: string;
  /** Another handler than the scripted or the recording one. */
  bundlePath?: string;
  environment?: Record<string, string>;
  maxBatchingWindowMs?: number;
  visibilityTimeoutMs?: number;
  faults?: MappingFaults;
  /** The function timeout. */
  timeoutMs?: number;
  fifo?: boolean;
  /** The mapping's long-poll wait. */
  waitTimeSeconds?: number;
}

export interface Queue {
  readonly queueUrl: string;
  readonly queueArn: string;
}

/**
 * The local event source mapping's test bench for one test file: one fauxqs and the handler
 * bundles for the file (started before its first test), fresh queues per test, and every mapping
 * and function a test started stopped after it. Its files run side by side with the others.
 */
export function useMappingLab() {
  let emulator: RunningEmulator | undefined;
  let bundles: Bundles | undefined;
  let client: SQSClient | undefined;
  const running: Array<{ mapping: LocalEventSourceMapping; fn: LocalFunction }> = [];
  let queueCount = 0;
  let recordDir = '';
  let fileCount = 0;

  beforeAll(async () => {
    recordDir = mkdtempSync(join(tmpdir(), 'esm-records-'));
    [emulator, bundles] = await Promise.all([startSqsEmulator(), bundleHandlers([])]);
    client = new SQSClient({
      region: LOCAL_REGION,
      endpoint: emulator.endpoint,
      credentials: LOCAL_CREDENTIALS,
    });
  });
  afterEach(async () => {
    for (const { mapping, fn } of running.splice(0)) {
      await mapping.stop();
      await fn.stop();
    }
  });
  afterAll(async () => {
    if (recordDir) rmSync(recordDir, { recursive: true, force: true });
    client?.destroy();
    await emulator?.stop();
    await bundles?.dispose();
  });

  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the mapping lab is used before its beforeAll ran');
    return value;
  };
  const sqs = () => started(client);

  /** A fresh queue name, `esm-<n>` (FIFO: with the `.fifo` suffix). */
  const nextQueueName = (fifo = false) => {
    queueCount += 1;
    return `esm-${queueCount}${fifo ? '.fifo' : ''}`;
  };

  /** A fresh file path in the file's temporary folder. */
  const nextFile = (prefix: string) => {
    fileCount += 1;
    return join(recordDir, `${prefix}-${fileCount}.jsonl`);
  };

  async function send(queueUrl: string, bodies: object[]): Promise<void> {
    for (let first = 0; first < bodies.length; first += 10) {
      await sqs().send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: bodies
            .slice(first, first + 10)
            .map((body, index) => ({ Id: String(index), MessageBody: JSON.stringify(body) })),
        }),
      );
    }
  }

  async function queueArnOf(queueUrl: string): Promise<string> {
    const { Attributes = {} } = await sqs().send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
    );
    return Attributes.QueueArn ?? '';
  }

  /** A fresh standard queue holding `bodies`. */
  async function queueWith(bodies: object[], visibilitySeconds = VISIBILITY_SECONDS): Promise<Queue> {
    const { QueueUrl = '' } = await sqs().send(
      new CreateQueueCommand({
        QueueName: nextQueueName(),
        Attributes: { VisibilityTimeout: String(visibilitySeconds) },
      }),
    );
    await send(QueueUrl, bodies);
    return { queueUrl: QueueUrl, queueArn: await queueArnOf(QueueUrl) };
  }

  /** A file the recording handler appends one line per invocation to, and a reader for it. */
  function recordFile<Line = RecordedInvocation>(): { path: string; read: () => Line[] } {
    const path = nextFile('invocations');
    const read = () => {
      let text = '';
      try {
        text = readFileSync(path, 'utf8');
      } catch {
        return []; // nothing written yet
      }
      return text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Line);
    };
    return { path, read };
  }

  /** A function (the scripted handler unless told otherwise) and its mapping on `queue`, started. */
  function start(queue: Queue, options: MappingOptions) {
    const fn = new LocalFunction({
      name: 'scripted',
      bundlePath: options.bundlePath ?? (options.recordTo ? RECORDING_HANDLER : SCRIPTED_HANDLER),
      workerPath: started(bundles).worker,
      timeoutMs: options.timeoutMs ?? 5000,
      memoryMb: 128,
      environment: {
        BATCH_DELAY_MS: String(options.delayMs ?? 0),
        ...(options.recordTo ? { RECORD_FILE: options.recordTo } : {}),
        ...options.environment,
      },
    });
    const mapping = new LocalEventSourceMapping({
      sqs: sqs(),
      ...queue,
      region: 'us-east-1',
      fn,
      batchSize: options.batchSize ?? 10,
      maxBatchingWindowMs: options.maxBatchingWindowMs ?? 0,
      maxConcurrency: options.maxConcurrency ?? 2,
      reportBatchItemFailures: options.reportBatchItemFailures ?? true,
      ...(options.visibilityTimeoutMs === undefined
        ? {}
        : { visibilityTimeoutMs: options.visibilityTimeoutMs }),
      ...(options.faults ? { faults: options.faults } : {}),
      ...(options.fifo ? { fifo: true } : {}),
      ...(options.waitTimeSeconds === undefined ? {} : { waitTimeSeconds: options.waitTimeSeconds }),
      onFatal: (error) => {
        throw error;
      },
    });
    running.push({ mapping, fn });
    mapping.start();
    return { mapping, fn };
  }

  async function until(condition: () => Promise<boolean> | boolean, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error('condition not met in time');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Nothing visible and nothing in flight. */
  const empty = async (queueUrl: string) => {
    const depth = await readQueueDepth(sqs(), queueUrl);
    return depth.visible === 0 && depth.inFlight === 0;
  };

  return {
    sqs,
    worker: () => started(bundles).worker,
    nextQueueName,
    nextFile,
    queueArnOf,
    queueWith,
    send,
    recordFile,
    start,
    until,
    empty,
  };
}
