import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { InvalidRecordError } from '../../../../contract/errors.js';
import { REDRIVE_COUNT_ATTRIBUTE, redriveCountOf } from '../../../../contract/message.js';
import { DEFAULT_RETENTION } from '../../../../contract/retention.js';
import { faultDraw } from '../../../../harness/local-aws/faults/faults.js';
import { crashDraw, crashTarget, createCrashInjector, shouldCrash } from '../../../../modes/kit/crash.js';
import { expiresAt } from '../../../../modes/kit/ledger.js';
import { consumerDeps, Killed, NOW } from '../../../support/consumer-deps.js';
import { messageBody, sqsRecord } from '../../../support/sqs-events.js';

describe('crash decision', () => {
  it('is deterministic for the same seed, event and receive count', () => {
    expect(crashDraw('s', 'evt-1', 1)).toBe(crashDraw('s', 'evt-1', 1));
  });

  it('draws afresh for a redelivery, another event or another seed', () => {
    const draws = new Set([
      crashDraw('s', 'evt-1', 1),
      crashDraw('s', 'evt-1', 2),
      crashDraw('s', 'evt-2', 1),
      crashDraw('t', 'evt-1', 1),
    ]);
    expect(draws.size).toBe(4);
  });

  it('crashes at about the configured rate and never at rate 0', () => {
    const ids = Array.from({ length: 10_000 }, (_, index) => `evt-${index}`);
    const crashes = ids.filter((id) => shouldCrash(0.05, 'seed', id, 1)).length;
    expect(crashes).toBeGreaterThan(400);
    expect(crashes).toBeLessThan(600);
    expect(ids.some((id) => shouldCrash(0, 'seed', id, 1))).toBe(false);
    expect(ids.every((id) => shouldCrash(1, 'seed', id, 1))).toBe(true);
  });

  it('crashes exactly at a chosen delivery, whatever the rate', async () => {
    let kills = 0;
    const injector = createCrashInjector({
      rate: 0,
      seed: 's',
      at: new Set([crashTarget('evt-7', 1)]),
      record: async () => undefined,
      kill: () => {
        kills += 1;
        throw new Killed('chosen');
      },
    });
    const at = (key: string, receiveCount: number) =>
      injector.maybeCrash({ runId: 'r', key, receiveCount, where: 'test' });

    await expect(at('evt-7', 2)).resolves.toBeUndefined();
    await expect(at('evt-8', 1)).resolves.toBeUndefined();
    await expect(at('evt-7', 1)).rejects.toThrow(Killed);
    expect(kills).toBe(1);
  });

  it('records the crash before killing, and kills even when recording fails', async () => {
    const order: string[] = [];
    const injector = createCrashInjector({
      rate: 1,
      seed: 's',
      record: async () => {
        order.push('record');
        throw new Error('table unavailable');
      },
      kill: () => {
        order.push('kill');
        throw new Error('killed');
      },
    });

    await expect(
      injector.maybeCrash({ runId: 'r', key: 'e', receiveCount: 1, where: 'test' }),
    ).rejects.toThrow('killed');
    expect(order).toEqual(['record', 'kill']);
  });

  it('does nothing when the draw says no', async () => {
    let killed = false;
    const injector = createCrashInjector({
      rate: 0,
      seed: 's',
      record: async () => undefined,
      kill: () => {
        killed = true;
        throw new Error('killed');
      },
    });
    await injector.maybeCrash({ runId: 'r', key: 'e', receiveCount: 1, where: 'test' });
    expect(killed).toBe(false);
  });
});

describe('crash record of a consumer', () => {
  const ddb = mockClient(DynamoDBDocumentClient);
  const point = { runId: 'run-1', key: 'evt-7', receiveCount: 2, where: 'after applying' } as const;

  beforeEach(() => ddb.reset());

  it('writes the counter and a per-event crash item in the mode partition before the kill', async () => {
    let writtenAtKill: Record<string, unknown>[] = [];
    ddb.on(UpdateCommand).resolves({});
    const deps = consumerDeps('at-least-once', {
      crashRate: 1,
      onKill: () => (writtenAtKill = ddb.commandCalls(UpdateCommand).map((call) => call.args[0].input)),
    });

    await expect(deps.untilKilled(deps.crash.maybeCrash(point))).rejects.toThrow(Killed);

    expect(deps.kills).toBe(1);
    expect(writtenAtKill.map((input) => (input.Key as { sk: string }).sk)).toEqual([
      'STAT#crashes',
      'CRASH#evt-7#2',
    ]);
    expect(writtenAtKill[1]).toMatchObject({
      TableName: 'ledger-test',
      Key: { pk: 'RUN#run-1#MODE#at-least-once', sk: 'CRASH#evt-7#2' },
      ExpressionAttributeValues: {
        ':one': 1,
        ':key': 'evt-7',
        ':receiveCount': 2,
        ':where': 'after applying',
        ':crashedAt': new Date(NOW).toISOString(),
        ':ttl': expiresAt({ now: () => NOW, retention: DEFAULT_RETENTION }),
      },
    });
    // ADD, so a re-sent copy crashing at the same receive count is counted, not overwritten.
    expect(writtenAtKill[1]?.UpdateExpression).toMatch(/^ADD crashes :one SET /);
  });

  it('still kills when the crash item cannot be written, and still writes the counter', async () => {
    const counted: string[] = [];
    ddb.on(UpdateCommand).callsFake((input: { Key: { sk: string } }) => {
      if (input.Key.sk.startsWith('CRASH#')) throw new Error('ProvisionedThroughputExceededException');
      counted.push(input.Key.sk);
      return {};
    });
    const deps = consumerDeps('at-least-once', { crashRate: 1 });

    await expect(deps.untilKilled(deps.crash.maybeCrash(point))).rejects.toThrow(Killed);

    expect(deps.kills).toBe(1);
    expect(counted).toEqual(['STAT#crashes']);
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(2);
  });

  it('kills without writing when the record names no run', async () => {
    const deps = consumerDeps('at-most-once', { crashRate: 1 });

    await expect(deps.untilKilled(deps.crash.maybeCrash({ ...point, runId: undefined }))).rejects.toThrow(
      Killed,
    );

    expect(deps.kills).toBe(1);
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });
});

describe('a redriven copy draws afresh', () => {
  const withRedrive = (record: ReturnType<typeof sqsRecord>, value: string, dataType = 'String') => ({
    ...record,
    messageAttributes: {
      ...record.messageAttributes,
      [REDRIVE_COUNT_ATTRIBUTE]: { stringValue: value, stringListValues: [], binaryListValues: [], dataType },
    },
  });

  it('draws what it always drew at redrive count 0, and something else at 1 and 2', () => {
    expect(crashDraw('s', 'evt-1', 1, 0)).toBe(crashDraw('s', 'evt-1', 1));
    const draws = new Set([
      crashDraw('s', 'evt-1', 1),
      crashDraw('s', 'evt-1', 1, 1),
      crashDraw('s', 'evt-1', 1, 2),
    ]);
    expect(draws.size).toBe(3);
    // The fault draws of the local runtime too.
    expect(faultDraw('s', 'kill', 'evt-1', 1, 0)).toBe(faultDraw('s', 'kill', 'evt-1', 1));
    expect(faultDraw('s', 'kill', 'evt-1', 1, 1)).not.toBe(faultDraw('s', 'kill', 'evt-1', 1));
  });

  it('an event dead-lettered by two crashes is not dead-lettered again by the same two', () => {
    // At rate 0.1, find events that crash at receives 1 and 2: without the redrive count, their
    // redriven copies (receive count 1, 2 again) would crash the same way, forever.
    const ids = Array.from({ length: 5000 }, (_, index) => `evt-${index}`);
    const twice = ids.filter((id) => shouldCrash(0.1, 'r1', id, 1) && shouldCrash(0.1, 'r1', id, 2));
    expect(twice.length).toBeGreaterThan(20);
    const again = twice.filter((id) => shouldCrash(0.1, 'r1', id, 1, 1) && shouldCrash(0.1, 'r1', id, 2, 1));
    expect(again.length).toBeLessThan(twice.length / 5);
  });

  it('reads the redrive count from the invocation’s records: the same draw in every mode, whatever the message id', async () => {
    const killedAt = async (record: ReturnType<typeof sqsRecord>) => {
      const keys: string[] = [];
      const injector = createCrashInjector({
        rate: 0.5,
        seed: 'modes',
        record: async () => undefined,
        kill: () => {
          throw new Killed('drawn');
        },
      });
      injector.observe?.([record]);
      for (let index = 0; index < 40; index += 1) {
        const key = `evt-${index}`;
        // Only the observed record's event carries the attribute; the others draw at redrive count 0.
        const crashed = await injector
          .maybeCrash({ runId: 'r', key, receiveCount: 1, where: 'test' })
          .then(() => false)
          .catch(() => true);
        if (crashed) keys.push(key);
      }
      return keys;
    };
    const body = messageBody({ eventId: 'evt-3' });
    const plain = await killedAt(sqsRecord(body, { messageId: 'm-a' }));
    const redriven = await killedAt(withRedrive(sqsRecord(body, { messageId: 'm-b' }), '1'));
    const redrivenElsewhere = await killedAt(withRedrive(sqsRecord(body, { messageId: 'm-c' }), '1'));
    expect(redriven).toEqual(redrivenElsewhere);
    expect(plain.filter((key) => key !== 'evt-3')).toEqual(redriven.filter((key) => key !== 'evt-3'));
    expect(plain.includes('evt-3')).toBe(shouldCrash(0.5, 'modes', 'evt-3', 1, 0));
    expect(redriven.includes('evt-3')).toBe(shouldCrash(0.5, 'modes', 'evt-3', 1, 1));
  });

  it('reads the attribute strictly: absent is 0, malformed throws', () => {
    const record = sqsRecord(messageBody());
    expect(redriveCountOf(record)).toBe(0);
    expect(redriveCountOf(withRedrive(record, '3'))).toBe(3);
    expect(redriveCountOf(withRedrive(record, '2', 'Number'))).toBe(2);
    for (const bad of ['', ' 1', '-1', '1.5', 'one', '01', '1e3']) {
      expect(() => redriveCountOf(withRedrive(record, bad))).toThrow(InvalidRecordError);
    }
    expect(() => redriveCountOf(withRedrive(record, '1', 'Binary'))).toThrow(/malformed redriveCount/);
    const injector = createCrashInjector({ rate: 1, seed: 's', record: async () => undefined });
    expect(() => injector.observe?.([withRedrive(record, 'x')])).toThrow(InvalidRecordError);
  });

  it('a crash target kills the delivery the producer sent, never a redriven copy at the same receive count', async () => {
    const kills: string[] = [];
    const injector = createCrashInjector({
      rate: 0,
      seed: 's',
      at: new Set([crashTarget('evt-3', 1)]),
      record: async () => undefined,
      kill: () => {
        throw new Killed('chosen');
      },
    });
    const invoke = async (records: ReturnType<typeof sqsRecord>[]) => {
      injector.observe?.(records);
      await injector
        .maybeCrash({ runId: 'r', key: 'evt-3', receiveCount: 1, where: 'test' })
        .catch((error: unknown) => {
          if (!(error instanceof Killed)) throw error;
          kills.push(records.map((record) => record.messageId).join('+'));
        });
    };
    const body = messageBody({ eventId: 'evt-3' });
    await invoke([sqsRecord(body, { messageId: 'original' })]);
    await invoke([withRedrive(sqsRecord(body, { messageId: 'copy-1' }), '1')]);
    await invoke([withRedrive(sqsRecord(body, { messageId: 'copy-2' }), '2')]);
    // The original and a copy in one batch: the original's delivery is in it, so the target holds.
    await invoke([
      withRedrive(sqsRecord(body, { messageId: 'copy-3' }), '1'),
      sqsRecord(body, { messageId: 'resent' }),
    ]);
    expect(kills).toEqual(['original', 'copy-3+resent']);
    // Read at rate 0 when there are targets, strictly.
    expect(() => injector.observe?.([withRedrive(sqsRecord(body), 'x')])).toThrow(InvalidRecordError);
  });

  it('ignores the attribute when no crash is drawn nor targeted (rate 0, every deployed default): a malformed one fails nothing', () => {
    const record = withRedrive(sqsRecord(messageBody()), 'x');
    const injector = createCrashInjector({ rate: 0, seed: 's', record: async () => undefined });
    expect(() => injector.observe?.([record])).not.toThrow();
  });
});
