/**
 * `npm run bench:verifier -- [--events N]`: the verifier at scale. Seeds one run's ledger in
 * DynamoDB Local with N events per mode (1% of them applied twice, as duplicates), then invokes
 * the verifier bundle in a local execution environment and reports its time and peak memory, and
 * checks its counts against what was seeded.
 */
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { chunks } from '../../contract/chunks.js';
import {
  applicationKey,
  appliedOnBalanceAttribute,
  appliedOnBalanceEntry,
  balanceKey,
  COUNTERS,
  counterKey,
  markerKey,
  partitionKey,
} from '../../contract/ledger-keys.js';
import { evidenceOf, MODE_NAMES, type Mode, settingsOf } from '../../contract/topology.js';
import { type ManifestEvent, writeManifestEvents, writeManifestSummary } from '../../verifier/manifest.js';
import { startEmbeddedEnvironment } from '../environments/embedded.js';
import type { ExperimentEnvironment } from '../environments/environment.js';
import type { ParsedOptions } from '../options/parse.js';
import { runEntryPoint } from '../options/run.js';
import { forEachConcurrently } from '../run/concurrently.js';

async function writeAll(env: ExperimentEnvironment, items: Record<string, unknown>[]): Promise<void> {
  await forEachConcurrently(chunks(items, 25), 8, async (chunk) => {
    let pending = chunk.map((Item) => ({ PutRequest: { Item } }));
    while (pending.length > 0) {
      const { UnprocessedItems } = await env.ddb.send(
        new BatchWriteCommand({ RequestItems: { [env.tableName]: pending } }),
      );
      pending = (UnprocessedItems?.[env.tableName] ?? []) as typeof pending;
    }
  });
}

/**
 * The account of the index-th event: 100 accounts, more for a large run, so that no balance item
 * that carries its applications (the one-write modes) comes near DynamoDB's 400 KB per item.
 */
const accountCount = (events: number): number => Math.max(100, Math.ceil(events / 4000));
const accountOf = (index: number, events: number): string => `acct-${index % accountCount(events)}`;

/** Seeds `events` events for one mode; every 100th is applied twice. Returns what the verifier must find. */
async function seed(env: ExperimentEnvironment, runId: string, mode: Mode, events: number) {
  const pk = partitionKey(runId, mode);
  const items: Record<string, unknown>[] = [];
  const balances = new Map<string, number>();
  /** The one-write modes: each application an entry of a list on its balance item. */
  const onBalance = new Map<string, Record<string, string[]>>();
  let duplicated = 0;
  for (let index = 0; index < events; index += 1) {
    const eventId = `evt-${String(index).padStart(7, '0')}`;
    const accountId = accountOf(index, events);
    const amountCents = 1 + (index % 997);
    // A state mode records each event once (a repeat rewrites its record): its state is what counts.
    const state = settingsOf(mode).balance === 'state';
    const applications = mode !== 'effectively-once' && !state && index % 100 === 0 ? 2 : 1;
    if (applications > 1) duplicated += 1;
    for (let delivery = 1; delivery <= applications; delivery += 1) {
      balances.set(accountId, (balances.get(accountId) ?? 0) + amountCents);
      if (evidenceOf(mode) === 'balance') {
        const lists = onBalance.get(accountId) ?? {};
        const name = appliedOnBalanceAttribute(eventId);
        const entry = appliedOnBalanceEntry({ receiveCount: delivery, appliedAtMs: 0, amountCents });
        lists[name] = [...(lists[name] ?? []), entry];
        onBalance.set(accountId, lists);
        continue;
      }
      const sk =
        mode === 'effectively-once'
          ? markerKey(eventId)
          : applicationKey(eventId, {
              receiveCount: delivery,
              messageId: `m-${index}`,
              requestId: `r-${delivery}`,
              position: 0,
            });
      const seq = Math.floor(index / accountCount(events)) + 1;
      items.push({
        pk,
        sk,
        eventId,
        accountId,
        amountCents,
        applications: 1,
        runId,
        mode,
        seq,
        // The account's balance after the event: what a state mode's record carries.
        balanceAfterCents: balances.get(accountId) ?? 0,
      });
    }
  }
  for (const [accountId, balanceCents] of balances)
    items.push({ pk, sk: balanceKey(accountId), accountId, balanceCents, ...onBalance.get(accountId) });
  items.push({ pk, sk: counterKey(COUNTERS.deliveries), count: events + duplicated });
  await writeAll(env, items);
  return { duplicated, items: items.length };
}

/** The producer's manifest of the seeded run: the same events in every mode. */
async function seedManifest(env: ExperimentEnvironment, runId: string, events: number): Promise<void> {
  const manifest: ManifestEvent[] = [];
  let expectedCents = 0;
  for (let index = 0; index < events; index += 1) {
    const amountCents = 1 + (index % 997);
    manifest.push({
      eventId: `evt-${String(index).padStart(7, '0')}`,
      accountId: accountOf(index, events),
      amountCents,
    });
    expectedCents += amountCents;
  }
  const store = { ddb: env.ddb, tableName: env.tableName };
  await writeManifestEvents(store, runId, manifest);
  await writeManifestSummary(store, runId, {
    produced: events,
    poison: 0,
    producerDuplicates: 0,
    expectedCents,
    modes: MODE_NAMES,
  });
}

async function main({ values: { events } }: ParsedOptions<'bench:verifier'>): Promise<number> {
  const env = await startEmbeddedEnvironment({
    modes: [],
    crashRate: 0,
    crashSeed: 'bench',
    visibilityTimeoutSeconds: 10,
    onStatus: (message) => process.stderr.write(`• ${message}\n`),
  });
  try {
    const runId = `bench-verifier-${events}`;
    const seeding = performance.now();
    const [seeded] = await Promise.all([
      Promise.all(MODE_NAMES.map((mode) => seed(env, runId, mode, events))),
      seedManifest(env, runId, events),
    ]);
    process.stderr.write(
      `• seeded ${seeded.reduce((sum, s) => sum + s.items, 0)} ledger items in ${((performance.now() - seeding) / 1000).toFixed(1)} s\n`,
    );

    const started = performance.now();
    const { result, peakRssKb } = await env.invokeVerifier(runId, MODE_NAMES);
    const seconds = (performance.now() - started) / 1000;

    const problems: string[] = [];
    for (const [index, mode] of MODE_NAMES.entries()) {
      const outcome = result.modes[mode];
      const expected = seeded[index];
      if (!outcome || !expected) continue;
      if (outcome.produced !== events || outcome.lost !== 0 || outcome.duplicated !== expected.duplicated) {
        problems.push(`${mode}: ${JSON.stringify(outcome)}`);
      }
      if (!outcome.consistent) problems.push(`${mode}: inconsistent`);
    }
    process.stdout.write(
      `verifier over ${events} events × ${MODE_NAMES.length} modes (${events * MODE_NAMES.length} events, ` +
        `+1% duplicates in two modes): ${seconds.toFixed(1)} s, ${Math.round((events * MODE_NAMES.length) / seconds)} events/s, ` +
        `peak RSS ${((peakRssKb ?? 0) / 1024).toFixed(0)} MB\n`,
    );
    if (problems.length > 0) {
      process.stderr.write(`verifier counts differ from the seeded ledger:\n${problems.join('\n')}\n`);
      return 1;
    }
    return 0;
  } finally {
    await env.stop();
  }
}

runEntryPoint('bench:verifier', main);
