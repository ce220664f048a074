import { describe, expect, it } from 'vitest';
import {
  type DynamoDbFault,
  type FaultPolicy,
  type FaultPolicyOptions,
  faultPolicy,
} from '../../../../../harness/local-aws/dynamodb-proxy/faults.js';
import type { ProxyAnswer, RequestHead } from '../../../../../harness/local-aws/dynamodb-proxy/proxy.js';

/** A request's head as the proxy hands it to its policies. */
function headOf(operation: string): RequestHead {
  return { method: 'POST', url: '/', headers: {}, operation };
}

/** A handler's request about an event of a mode, as the ledger sends it. */
function requestOf(mode: string, eventId = 'evt-1'): Record<string, unknown> {
  return {
    TableName: 'ledger',
    Key: { pk: { S: `RUN#r-1#MODE#${mode}` }, sk: { S: `APP#${eventId}` } },
  };
}

const OK: ProxyAnswer = { status: 200, headers: {}, body: Buffer.from('{}') };

/** Runs one request through the policy; the upstream answers 200 and records what reached it. */
async function send(
  policy: FaultPolicy,
  operation: string,
  request: Record<string, unknown>,
): Promise<{ forwarded: boolean; status: number; type: string | undefined }> {
  let forwarded = false;
  const body = Buffer.from(JSON.stringify(request));
  const forward = async () => {
    forwarded = true;
    return OK;
  };
  const handle = policy.admit(headOf(operation));
  const answer = handle ? await handle(body, forward) : await forward();
  const parsed = JSON.parse(answer.body.toString('utf8')) as { __type?: string };
  return { forwarded, status: answer.status, type: parsed.__type?.split('#')[1] };
}

/** A fault policy on a clock the test moves by hand, in ms. */
function pinned(options: Partial<FaultPolicyOptions> = {}) {
  const clock = { now: 1_000_000 };
  const policy = faultPolicy({ seed: 'unit', rate: 0, now: () => clock.now, ...options });
  return { policy, clock };
}

const outage = { afterSeconds: 2, forSeconds: 30 };

describe('the fault policy’s outage window', () => {
  it('opens afterSeconds after the clock starts and closes forSeconds later', async () => {
    const { policy, clock } = pinned({ outage });
    policy.startClock();
    const at = async (ms: number) => {
      clock.now = 1_000_000 + ms;
      return send(policy, 'TransactWriteItems', requestOf('effectively-once'));
    };

    expect(await at(1_999)).toMatchObject({ forwarded: true, status: 200 });
    expect(await at(2_000)).toEqual({ forwarded: false, status: 503, type: 'ServiceUnavailable' });
    expect(await at(31_999)).toMatchObject({ forwarded: false, status: 503 });
    expect(await at(32_000)).toMatchObject({ forwarded: true, status: 200 });
    expect(policy.stats.outageRejections).toBe(2);
  });

  it('is not open before the clock starts, and a second start does not move it', async () => {
    const { policy, clock } = pinned({ outage: { afterSeconds: 0, forSeconds: 10 } });
    expect(await send(policy, 'PutItem', requestOf('at-least-once'))).toMatchObject({ forwarded: true });

    policy.startClock();
    clock.now += 5_000;
    policy.startClock();
    expect(await send(policy, 'PutItem', requestOf('at-least-once'))).toMatchObject({ status: 503 });
    clock.now += 5_000;
    expect(await send(policy, 'PutItem', requestOf('at-least-once'))).toMatchObject({ forwarded: true });
  });

  it('judges a request by when it arrives, not when its body is in', async () => {
    const { policy, clock } = pinned({ outage: { afterSeconds: 0, forSeconds: 1 } });
    policy.startClock();
    const handle = policy.admit(headOf('UpdateItem'));
    clock.now += 1_000;
    const answer = await handle?.(Buffer.from(JSON.stringify(requestOf('at-least-once'))), async () => OK);
    expect(answer?.status).toBe(503);
  });

  it('fails every data-path operation and passes control-plane calls', async () => {
    const { policy } = pinned({ outage: { afterSeconds: 0, forSeconds: 60 } });
    policy.startClock();
    for (const operation of [
      'TransactWriteItems',
      'UpdateItem',
      'PutItem',
      'DeleteItem',
      'GetItem',
      'Query',
    ]) {
      expect(await send(policy, operation, requestOf('at-least-once')), operation).toMatchObject({
        forwarded: false,
        status: 503,
        type: 'ServiceUnavailable',
      });
    }
    for (const operation of ['DescribeTable', 'ListTables']) {
      expect(await send(policy, operation, { TableName: 'ledger' }), operation).toMatchObject({
        forwarded: true,
        status: 200,
      });
    }
    expect(policy.stats).toMatchObject({ requests: 8, outageRejections: 6 });
  });

  it('counts rejections per mode, under other when the body names none', async () => {
    const { policy } = pinned({ outage: { afterSeconds: 0, forSeconds: 60 } });
    policy.startClock();
    await send(policy, 'TransactWriteItems', requestOf('effectively-once'));
    await send(policy, 'TransactWriteItems', requestOf('effectively-once', 'evt-2'));
    await send(policy, 'UpdateItem', requestOf('at-least-once'));
    await send(policy, 'PutItem', {
      TableName: 'idempotency',
      Item: { id: { S: 'powertools-idempotency#h' } },
    });
    await send(policy, 'GetItem', { TableName: 'ledger', Key: { pk: { S: 'RUN#r-1#MANIFEST' } } });

    expect(policy.stats.outageRejections).toBe(5);
    expect(policy.stats.byMode).toEqual({
      'effectively-once': {
        throttled: 0,
        serverErrors: 0,
        lostResponses: 0,
        conflicts: 0,
        outageRejections: 2,
      },
      'at-least-once': { throttled: 0, serverErrors: 0, lostResponses: 0, conflicts: 0, outageRejections: 1 },
      'powertools-idempotency': {
        throttled: 0,
        serverErrors: 0,
        lostResponses: 0,
        conflicts: 0,
        outageRejections: 1,
      },
      other: { throttled: 0, serverErrors: 0, lostResponses: 0, conflicts: 0, outageRejections: 1 },
    });
  });

  it('combines with the rate: its faults outside the window, the outage alone inside it', async () => {
    const kinds: DynamoDbFault[] = ['throttle', 'throttle', 'throttle'];
    const { policy, clock } = pinned({ outage, faultFor: (n) => kinds[n] });
    policy.startClock();

    expect(await send(policy, 'UpdateItem', requestOf('at-least-once'))).toMatchObject({ status: 400 });
    clock.now += 2_000;
    expect(await send(policy, 'UpdateItem', requestOf('at-least-once'))).toMatchObject({ status: 503 });
    clock.now += 30_000;
    expect(await send(policy, 'UpdateItem', requestOf('at-least-once'))).toMatchObject({ status: 400 });
    expect(await send(policy, 'UpdateItem', requestOf('at-least-once'))).toMatchObject({ status: 200 });
    expect(policy.stats).toMatchObject({ throttled: 2, outageRejections: 1 });
  });

  it('draws the rate’s faults from the seed as before when there is no outage', async () => {
    const draws = async (options: Partial<FaultPolicyOptions>) => {
      const { policy } = pinned({ rate: 0.5, ...options });
      policy.startClock();
      const statuses: number[] = [];
      for (let event = 0; event < 40; event += 1)
        statuses.push((await send(policy, 'UpdateItem', requestOf('at-least-once', `evt-${event}`))).status);
      return { statuses, stats: policy.stats };
    };
    const without = await draws({});
    const ended = await draws({ outage: { afterSeconds: 0, forSeconds: 0 } });
    expect(ended.statuses).toEqual(without.statuses);
    expect(without.statuses.some((status) => status !== 200)).toBe(true);
    expect(ended.stats.outageRejections).toBe(0);
  });
});
