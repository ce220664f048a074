/**
 * The producing service, in its own process so that a crash is a real SIGKILL: per event it
 * commits its state change, then (dual-write) sends the event or (outbox) leaves that to the relay.
 * The crash point is between the commit and the send, drawn from the seed and the event.
 */
import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { killSelf } from '../../../modes/kit/crash.js';
import { type OutboxMessage, outboxItem, publishOutboxMessages } from '../../../services/outbox/outbox.js';
import { clients, failWith, receiveWork, report, warmUp } from './child-side.js';
import { producerCrashes } from './crash-draws.js';
import type { ProducerWork } from './protocol.js';
import { stateKey } from './tables.js';

async function main(): Promise<void> {
  const work = receiveWork<ProducerWork>();
  const client = clients();
  await warmUp(client);
  const { ddb, sqs } = client;
  const { events, kind, runId, tables, targets, crashRate, seed } = await work;
  for (const event of events) {
    const message: OutboxMessage = { ...event, runId: runId };
    const pending = {
      TableName: tables.state,
      Key: stateKey(runId, event.accountId),
      UpdateExpression: 'ADD pendingCents :amount, commits :one',
      ExpressionAttributeValues: { ':amount': event.amountCents, ':one': 1 },
    };
    if (kind === 'dual-write') {
      await ddb.send(new UpdateCommand(pending));
    } else {
      // The state change and the event commit together or not at all.
      await ddb.send(
        new TransactWriteCommand({
          TransactItems: [
            { Update: pending },
            { Put: { TableName: tables.outbox, Item: outboxItem(message) } },
          ],
        }),
      );
    }
    void report({ type: 'committed', position: event.position });
    if (producerCrashes(crashRate, seed, event.eventId, event.occurrence)) {
      await report({ type: 'crashing', positions: [event.position] });
      killSelf();
    }
    if (kind === 'dual-write') {
      await publishOutboxMessages(sqs, targets, [message], {
        onSent: (target, count) => void report({ type: 'sent', target, count }),
      });
      void report({ type: 'published', positions: [event.position] });
    }
  }
  await report({ type: 'done' });
  process.exit(0);
}

// Only when started as one (harness/run/outbox/processes.ts): importing this file must not start a producer.
if (process.env.OUTBOX_PROCESS === 'producer') main().catch(failWith);
