import type { EffectiveModeSettings } from '../../../contract/deployment-settings.js';
import type { Mode } from '../../../contract/topology.js';
import type { FaultSettings } from './faults.js';

/**
 * How long failures take to dead-letter a message of a mode: SQS gives a failed record back only
 * after its visibility timeout, and moves it to the DLQ only after max receive count receives, so a
 * message first received when the outage begins needs the outage to outlast visibility × max
 * receive count (less the last visibility round, plus the time to process; this keeps the margin).
 */
export function outageNeededSeconds(settings: EffectiveModeSettings): number {
  return settings.visibilityTimeoutSeconds * settings.maxReceiveCount;
}

/**
 * The warning to print before a run whose outage cannot fill the DLQs: it ends before any message
 * has failed max receive count times, so the messages wait it out and are applied after it.
 * Undefined when there is no outage or it outlasts visibility × max receive count in every mode.
 */
export function outageWarning(
  faults: Pick<FaultSettings, 'outage'>,
  modes: readonly Mode[],
  settings: Readonly<Record<Mode, EffectiveModeSettings>>,
): string | undefined {
  const { outage } = faults;
  if (outage === undefined) return undefined;
  // The modes with the same visibility and max receive count, described once.
  const short = new Map<string, { needed: number; modes: Mode[] }>();
  for (const mode of modes) {
    const s = settings[mode];
    const needed = outageNeededSeconds(s);
    if (outage.forSeconds > needed) continue;
    const text = `visibility ${s.visibilityTimeoutSeconds} s × max receive count ${s.maxReceiveCount} = ${needed} s`;
    const group = short.get(text) ?? { needed, modes: [] };
    group.modes.push(mode);
    short.set(text, group);
  }
  if (short.size === 0) return undefined;
  const longest = Math.max(...[...short.values()].map((group) => group.needed));
  const rule = [...short]
    .map(([text, group]) =>
      group.modes.length === modes.length ? text : `${text} (${group.modes.join(', ')})`,
    )
    .join('; ');
  return (
    `warning: the DynamoDB outage (--outage-for ${outage.forSeconds}) is too short to fill the DLQs: ` +
    `a record that fails comes back only after the visibility timeout, so a message is dead-lettered only ` +
    `after failing for ${rule}. The messages wait the outage out and are applied after it. ` +
    `Use --outage-for ${longest + 1} or more, or a lower --max-receive-count or --visibility-timeout.`
  );
}
