import { describe, expect, it } from 'vitest';
import { Invocation, interceptFetch } from './invocation.js';
import { type Fault, stepKey } from './steps.js';

const KEY = stepKey('evt-1', 'UpdateItem', 1, 1);

/** One invocation that sends `attempts` attempts of one request, as an SDK retrying a 500 does. */
async function sendWithRetries(fault: Fault | undefined, attempts = 3) {
  const applied: number[] = [];
  const invocation = new Invocation(1, new Map(fault ? [[KEY, fault]] : []), () => 'evt-1');
  const outcome = await invocation.run(async () => {
    for (let attempt = 1; attempt <= attempts; attempt += 1) {
      const answer = await invocation.step({
        service: 'dynamodb',
        operation: 'UpdateItem',
        text: '{"evt-1"}',
        sendId: 'send-1',
        attempt,
        send: async () => {
          applied.push(attempt);
          return 200;
        },
        lost: () => 500,
      });
      if (answer === 200) return 'ok';
    }
    throw new Error('every attempt failed');
  }, Date.now() + 10_000);
  return { applied, outcome, trace: invocation.trace.map((step) => step.key) };
}

describe('an invocation under a planned fault', () => {
  it('sends every step as is without a fault, and traces it', async () => {
    const { applied, outcome, trace } = await sendWithRetries(undefined);

    expect(applied).toEqual([1]);
    expect(outcome).toEqual({ kind: 'returned', value: 'ok' });
    expect(trace).toEqual([KEY]);
  });

  it('killed before: the attempt never leaves, and the invocation never returns', async () => {
    const { applied, outcome } = await sendWithRetries('killed-before');

    expect(applied).toEqual([]);
    expect(outcome).toEqual({ kind: 'killed' });
  });

  it('response lost: applied, answered 500, and the retry goes out as deployed', async () => {
    const { applied, outcome, trace } = await sendWithRetries('response-lost');

    expect(applied).toEqual([1, 2]);
    expect(outcome).toEqual({ kind: 'returned', value: 'ok' });
    expect(trace).toEqual([KEY, stepKey('evt-1', 'UpdateItem', 1, 2)]);
  });

  it('lost, then killed: applied, and nothing after it happens', async () => {
    const { applied, outcome } = await sendWithRetries('lost-then-killed');

    expect(applied).toEqual([1]);
    expect(outcome).toEqual({ kind: 'killed' });
  });

  it('lost, error seen: applied once, every later attempt refused, the handler sees the error', async () => {
    const { applied, outcome, trace } = await sendWithRetries('lost-error-seen');

    expect(applied).toEqual([1]);
    expect(outcome.kind).toBe('threw');
    expect(trace).toEqual([KEY]);
  });

  it('ends an invocation still running at its deadline as Lambda does: nothing after it is sent', async () => {
    const sent: string[] = [];
    const invocation = new Invocation(1, new Map(), () => 'evt-1');
    const step = (sendId: string) =>
      invocation.step({
        service: 'dynamodb',
        operation: 'UpdateItem',
        text: '',
        sendId,
        attempt: 1,
        send: async () => {
          sent.push(sendId);
          return 200;
        },
        lost: () => 500,
      });
    const outcome = await invocation.run(async () => {
      await step('before');
      await new Promise((resolve) => setTimeout(resolve, 100));
      await step('after');
    }, Date.now() + 20);

    expect(outcome).toEqual({ kind: 'timed-out' });
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(sent).toEqual(['before']);
  });

  it('the acknowledgement: killed before it, or not applied', () => {
    const ack = stepKey('batch', 'acknowledge', 1, 1);
    expect(new Invocation(1, new Map(), () => 'batch').acknowledge()).toBe('delivered');
    expect(new Invocation(1, new Map([[ack, 'killed-before']]), () => 'batch').acknowledge()).toBe('killed');
    expect(new Invocation(1, new Map([[ack, 'ack-not-applied']]), () => 'batch').acknowledge()).toBe(
      'not-applied',
    );
  });

  it('numbers the sends of one operation per event: a second send is occurrence 2', async () => {
    const invocation = new Invocation(1, new Map(), () => 'evt-1');
    for (const sendId of ['a', 'b']) {
      await invocation.step({
        service: 'dynamodb',
        operation: 'PutItem',
        text: '',
        sendId,
        attempt: 1,
        send: async () => 200,
        lost: () => 500,
      });
    }

    expect(invocation.trace.map((step) => step.key)).toEqual([
      stepKey('evt-1', 'PutItem', 1, 1),
      stepKey('evt-1', 'PutItem', 2, 1),
    ]);
  });
});

describe('a traced fetch', () => {
  it('numbers a re-sent request as its next attempt, and another URL as another request', async () => {
    const sent: string[] = [];
    const base = (async (input: string | URL | Request) => {
      sent.push(String(input));
      return new Response('{}');
    }) as typeof fetch;
    const traced = interceptFetch(base);
    const invocation = new Invocation(1, new Map(), (text) => (text.includes('evt-2') ? 'evt-2' : 'evt-1'));
    await invocation.run(async () => {
      await traced('http://provider/charges/evt-1', { method: 'POST', body: '{"a":1}' });
      await traced('http://provider/charges/evt-1', { method: 'POST', body: '{"a":1}' });
      await traced('http://provider/charges/evt-2', { method: 'POST', body: '{"a":1}' });
      await traced('http://provider/status');
    }, Date.now() + 10_000);
    expect(invocation.trace.map((step) => step.key)).toEqual([
      'evt-1:fetch:1:1',
      'evt-1:fetch:1:2',
      'evt-2:fetch:1:1',
      'evt-1:fetch:2:1',
    ]);
    expect(sent).toHaveLength(4);
  });
});
