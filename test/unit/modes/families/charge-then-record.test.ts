import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { payloadHash } from '../../../../contract/message.js';
import {
  DEFAULT_RETENTION,
  PROVIDER_KEY_RETENTION_SECONDS,
  retentionOf,
} from '../../../../contract/retention.js';
import { consumer as noKey } from '../../../../modes/charge-no-key.js';
import { consumer as withKey } from '../../../../modes/charge-with-key.js';
import { chargeRetention } from '../../../../modes/families/charge-then-record.js';
import type { ConsumerDeps } from '../../../../modes/kit/consumer.js';
import type { ChargeDeps } from '../../../../services/payment-provider/client.js';
import {
  type ChargeOptions,
  type ChargeRequest,
  ProviderUnavailableError,
} from '../../../../services/payment-provider/client.js';
import { consumerDeps, Killed, NOW } from '../../../support/consumer-deps.js';
import { lambdaContext, messageBody, sqsEvent, sqsRecord } from '../../../support/sqs-events.js';

/** What happened, in order: the provider's charges and the ledger's transactions side by side. */
type Step =
  | { readonly step: 'charge'; readonly request: ChargeRequest; readonly options: ChargeOptions }
  | {
      readonly step: 'record';
    };

/** A charge mode's processBatch, given its charge deps as its Lambda entry is. */
const withCharge =
  (mode: typeof noKey | typeof withKey) =>
  (event: SQSEvent, context: Context, deps: ConsumerDeps, charge: ChargeDeps) =>
    mode.processBatch(event, context, { ...deps, charge });
const chargeNoKey = withCharge(noKey);
const chargeWithKey = withCharge(withKey);

/** A provider that charges and answers: the handler's decisions are what is under test, not HTTP. */
function recordingProvider(
  steps: Step[],
  options: { fail?: Error; lostResponseRate?: number } = {},
): ChargeDeps {
  let charges = 0;
  return {
    lostResponseRate: options.lostResponseRate ?? 0,
    payments: {
      charge: async (request, chargeOptions = {}) => {
        steps.push({ step: 'charge', request, options: chargeOptions });
        if (options.fail) throw options.fail;
        charges += 1;
        return { chargeId: `ch_${charges}`, replayed: false, attempts: 1 };
      },
    },
  };
}

describe('charge modes: charge at the provider, then record in the marker transaction', () => {
  const ddb = mockClient(DynamoDBDocumentClient);
  const sqs = mockClient(SQSClient);
  let steps: Step[];

  beforeEach(() => {
    ddb.reset();
    sqs.reset();
    steps = [];
    ddb.on(UpdateCommand).resolves({});
    ddb.on(TransactWriteCommand).callsFake(() => {
      steps.push({ step: 'record' });
      return {};
    });
  });

  it("charges first, with the event's id as the key, then records the charge id on the marker", async () => {
    const body = messageBody({ runId: 'run-7', eventId: 'evt-3', accountId: 'acct-4', amountCents: 1234 });

    const result = await chargeWithKey(
      sqsEvent(sqsRecord(body)),
      lambdaContext,
      consumerDeps('charge-with-key'),
      recordingProvider(steps),
    );

    expect(result).toEqual({ batchItemFailures: [] });
    expect(steps.map(({ step }) => step)).toEqual(['charge', 'record']);
    const [charge] = steps;
    expect(charge).toMatchObject({
      request: {
        account: 'acct-4',
        amountCents: 1234,
        currency: 'usd',
        metadata: { runId: 'run-7', mode: 'charge-with-key', eventId: 'evt-3' },
      },
      options: { idempotencyKey: 'run-7:evt-3' },
    });
    const [marker] = ddb.commandCalls(TransactWriteCommand)[0]?.args[0].input.TransactItems ?? [];
    expect(marker?.Update?.Key).toEqual({ pk: 'RUN#run-7#MODE#charge-with-key', sk: 'APP#evt-3' });
    expect(marker?.Update?.ConditionExpression).toBe('attribute_not_exists(#pk) OR #dedupeUntil < :now');
    expect(Object.values(marker?.Update?.ExpressionAttributeValues ?? {})).toContain('ch_1');
  });

  it('charge-no-key sends no idempotency key', async () => {
    await chargeNoKey(
      sqsEvent(sqsRecord(messageBody())),
      lambdaContext,
      consumerDeps('charge-no-key'),
      recordingProvider(steps),
    );

    const [charge] = steps;
    expect(charge?.step).toBe('charge');
    expect(charge?.step === 'charge' && charge.options.idempotencyKey).toBeUndefined();
  });

  it('the crash point lies between the charge and the record: killed there, the card is charged and nothing is recorded', async () => {
    const deps = consumerDeps('charge-with-key', { crashRate: 1 });

    // The test's kill never settles, as a SIGKILL never returns: nothing after the charge runs.
    await expect(
      deps.untilKilled(
        chargeWithKey(sqsEvent(sqsRecord(messageBody())), lambdaContext, deps, recordingProvider(steps)),
      ),
    ).rejects.toThrow(Killed);

    expect(deps.kills).toBe(1);
    expect(steps.map(({ step }) => step)).toEqual(['charge']);
  });

  it('a provider that cannot be reached fails the record and records nothing', async () => {
    const record = sqsRecord(messageBody());

    const result = await chargeWithKey(
      sqsEvent(record),
      lambdaContext,
      consumerDeps('charge-with-key'),
      recordingProvider(steps, {
        fail: new ProviderUnavailableError('http://provider', 4, 'timeout'),
      }),
    );

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: record.messageId }] });
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(0);
  });

  it('a redelivery after the record finds the marker: skipped, counted, not failed', async () => {
    const body = messageBody({ accountId: 'acct-1', amountCents: 250 });
    ddb.on(TransactWriteCommand).rejects(
      new TransactionCanceledException({
        message: 'Transaction cancelled',
        $metadata: {},
        CancellationReasons: [
          {
            Code: 'ConditionalCheckFailed',
            Item: { payloadHash: { S: payloadHash(body) }, dedupeUntil: { N: '9999999999' } },
          },
          { Code: 'None' },
        ],
      }),
    );

    const result = await chargeWithKey(
      sqsEvent(sqsRecord(body, { receiveCount: 2 })),
      lambdaContext,
      consumerDeps('charge-with-key'),
      recordingProvider(steps),
    );

    expect(result).toEqual({ batchItemFailures: [] });
    const counters = ddb.commandCalls(UpdateCommand).map((call) => call.args[0].input.Key?.sk);
    expect(counters).toContain('STAT#suppressedDuplicates');
  });

  it("with a key, the age guard refuses an event older than the provider's key retention, before charging", async () => {
    const old = messageBody({ createdAt: new Date(NOW - 2 * 24 * 3600 * 1000).toISOString() });
    const record = sqsRecord(old);

    const withKey = await chargeWithKey(
      sqsEvent(record),
      lambdaContext,
      consumerDeps('charge-with-key'),
      recordingProvider(steps),
    );

    expect(withKey).toEqual({ batchItemFailures: [{ itemIdentifier: record.messageId }] });
    expect(steps).toEqual([]);
    // Without a key only the marker's 30 days count: the same event is charged.
    await chargeNoKey(
      sqsEvent(sqsRecord(old)),
      lambdaContext,
      consumerDeps('charge-no-key'),
      recordingProvider(steps),
    );
    expect(steps.map(({ step }) => step)).toEqual(['charge', 'record']);
  });

  it('the shorter of marker and key retention', () => {
    expect(chargeRetention(DEFAULT_RETENTION, true).markerTtlSeconds).toBe(PROVIDER_KEY_RETENTION_SECONDS);
    expect(chargeRetention(DEFAULT_RETENTION, false)).toBe(DEFAULT_RETENTION);
    const short = retentionOf(3600);
    expect(chargeRetention(short, true)).toBe(short);
  });

  it('draws lost responses per attempt from the crash seed: all at rate 1, none at 0', async () => {
    await chargeWithKey(
      sqsEvent(sqsRecord(messageBody())),
      lambdaContext,
      consumerDeps('charge-with-key'),
      recordingProvider(steps, { lostResponseRate: 1 }),
    );
    await chargeWithKey(
      sqsEvent(sqsRecord(messageBody())),
      lambdaContext,
      consumerDeps('charge-with-key'),
      recordingProvider(steps, { lostResponseRate: 0 }),
    );

    const [always, never] = steps.filter((step) => step.step === 'charge');
    expect(
      [1, 2, 3].map((attempt) => always?.step === 'charge' && always.options.loseResponse?.(attempt)),
    ).toEqual([true, true, true]);
    expect(
      [1, 2, 3].map((attempt) => never?.step === 'charge' && never.options.loseResponse?.(attempt)),
    ).toEqual([false, false, false]);
  });
});
