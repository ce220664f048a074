/**
 * The embedded outbox relay, in its own process so that a crash is a real SIGKILL: between a
 * chunk's publish and its checkpoint, drawn from the seed, the event and the relay's generation.
 */
import { killSelf } from '../../../modes/kit/crash.js';
import { clients, failWith, receiveWork, report, warmUp } from './child-side.js';
import { relayCrashes } from './crash-draws.js';
import type { RelayWork, StopMessage } from './protocol.js';
import { relayStream } from './stream-relay.js';

async function main(): Promise<void> {
  let stopRequested = false;
  const received = receiveWork<RelayWork>((message) => {
    if ((message as StopMessage).type === 'stop') stopRequested = true;
  });
  const client = clients();
  await warmUp(client);
  const work = await received;
  await relayStream({
    ...client,
    runId: work.runId,
    tables: work.tables,
    targets: work.targets,
    pollMs: work.pollMs,
    onSent: (target, count) => void report({ type: 'sent', target, count }),
    afterPublish: async (chunk) => {
      const positions = chunk.map((message) => message.position);
      void report({ type: 'published', positions });
      const last = chunk.at(-1);
      if (last && relayCrashes(work.crashRate, work.seed, last.eventId, work.generation)) {
        await report({ type: 'crashing', positions });
        killSelf();
      }
    },
    stopRequested: () => stopRequested,
  });
  await report({ type: 'done' });
  process.exit(0);
}

// Only when started as one (harness/run/outbox/processes.ts): importing this file must not start a relay.
if (process.env.OUTBOX_PROCESS === 'relay') main().catch(failWith);
