/** The notes below the run's tables: what a reader might misread in them. */
import { MODES } from '../../contract/topology.js';
import { anyFault } from '../local-aws/faults/faults.js';
import type { ExperimentReport } from '../run/experiment.js';
import { deliveredTwiceByEnvironment, modeRows, violations } from './violations.js';

/** What a reader might misread in the table. */
export function notes(report: ExperimentReport): string[] {
  const rows = modeRows(report);
  const outcomes = rows.map(([, outcome]) => outcome);
  const notes: string[] = [];
  if (
    report.config.crashRate > 0 &&
    outcomes.every((outcome) => outcome.crashes === 0) &&
    !anyFault(report.config.faults)
  ) {
    notes.push(
      `note: no crash was drawn for seed ${report.config.seed} at crash rate ${report.config.crashRate}, so every mode ` +
        'is exact; try another --seed or a higher --crash-rate to see the semantics differ.',
    );
  }
  for (const [mode, outcome] of rows) {
    if (!MODES[mode].promises.noLoss && outcome.poison > 0 && outcome.lost > 0) {
      notes.push(
        `note: ${mode} deletes before it validates, so the poison bodies it received are among its ${outcome.lost} lost; ` +
          'the modes that work first dead-letter them instead.',
      );
    }
    if (
      MODES[mode].promises.noDuplicates &&
      outcome.duplicated > 0 &&
      deliveredTwiceByEnvironment(mode, outcome)
    ) {
      notes.push(
        `note: ${mode}'s duplicates come from the environment, not the mode: records were delivered twice ` +
          '(producer re-sends, redeliveries or visibility overruns), and it applies each delivery it deletes; ' +
          'or a lost response made the SDK send its credit again (an UpdateItem has no idempotency token).',
      );
    }
  }
  const overruns = outcomes.reduce((sum, outcome) => sum + (outcome.runtime?.visibilityOverruns ?? 0), 0);
  if (overruns > 0) {
    notes.push(
      `note: ${overruns} batch(es) outlived their visibility timeout, so SQS may have handed the same messages to ` +
        'a second invocation: duplicates may come from the environment, not only from the mode.',
    );
  }
  const timeouts = outcomes.reduce((sum, outcome) => sum + (outcome.runtime?.timeouts ?? 0), 0);
  if (timeouts > 0) {
    notes.push(
      `note: ${timeouts} invocation(s) hit the local function timeout and were killed (the machine was slow): ` +
        'like a crash, their batches come back, so at-least-once and Powertools may count more duplicates ' +
        'than crashes, and at-most-once more losses. A longer --visibility-timeout gives the function ' +
        'more time (1 s less than it): try --visibility-timeout 5.',
    );
  }
  const outage = report.config.faults.outage;
  const rejected = outcomes.reduce(
    (sum, outcome) => sum + (outcome.runtime?.injected.outageRejections ?? 0),
    0,
  );
  if (outage && rows.some(([, outcome]) => outcome.runtime) && rejected === 0) {
    notes.push(
      `note: no request met the DynamoDB outage: the queues were drained before it began, ${outage.afterSeconds} s ` +
        'after the first send; a lower --outage-after puts it inside the run.',
    );
  }
  const outOfOrder = rows.filter(([, outcome]) => (outcome.orderViolations ?? 0) > 0);
  if (outOfOrder.length > 0) {
    notes.push(
      `note: applied out of order within an account: ${outOfOrder.map(([mode, outcome]) => `${mode} ${outcome.orderViolations}`).join(', ')} ` +
        'event(s) applied after a later event of the same account (orderViolations in the JSON): a standard queue ' +
        'keeps no order, and a retry comes back after the events behind it.',
    );
  }
  const unseen = rows.filter(([, outcome]) => (outcome.deadLetteredUnseen ?? 0) > 0);
  if (unseen.length > 0) {
    notes.push(
      `note: in the DLQ, not seen: ${unseen.map(([mode, outcome]) => `${mode} ${outcome.deadLetteredUnseen}`).join(', ')} ` +
        "dead-lettered event(s) behind their account's first messages in a FIFO DLQ, which shows a reader only the head " +
        'of each message group without deleting it; counted after the last event of their account the verifier saw ' +
        'there, and only as far as the DLQ holds messages it did not see ' +
        '(deadLetteredUnseen in the JSON; docs/ordering.md, "Counting a FIFO DLQ").',
    );
  }
  const refused = rows.filter(([, outcome]) => (outcome.tooOldToDedupe ?? 0) > 0);
  if (refused.length > 0) {
    notes.push(
      `note: the age guard refused ${refused.map(([mode, outcome]) => `${outcome.tooOldToDedupe} in ${mode}`).join(', ')} ` +
        'of the first drain: events older than their dedupe records remember (--marker-ttl), failed into the DLQ ' +
        'instead of risking a second credit (docs/retention.md).',
    );
  }
  if (report.config.faults.throttleRate > 0) {
    notes.push(
      'note: deliveries and crashes are counters updated with UpdateItem ADD, which has no idempotency token: ' +
        'a lost response the SDK retries adds twice, so under --throttle-rate they can read high. The outcome ' +
        'counts come from event ids and do not depend on them; the runtime’s own counts are in the JSON (runtime).',
    );
  }
  if (rows.some(([mode, outcome]) => violations(mode, outcome).size > 0)) {
    notes.push(
      'note: a count marked ! is one a correct run cannot produce (an unexpected application or a payload that ' +
        'differs from the manifest, a broken promise of the mode, a ledger that does not add up): a bug, not a semantic.',
    );
  }
  return notes.length > 0 ? [...notes, ''] : [];
}
