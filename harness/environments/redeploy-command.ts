import { DEFAULT_DEPLOYMENT } from '../../contract/deployment-settings.js';
import {
  DEFAULT_STACK_NAME,
  modeOutputs,
  pollersOfScaling,
  STACK_OUTPUTS,
} from '../../contract/stack-outputs.js';
import { MODE_NAMES, type Mode } from '../../contract/topology.js';

export interface RedeployTarget {
  readonly target: 'aws' | 'localstack';
  readonly stackName: string;
}

/** Settings the redeploy should change; the rest stays as the outputs show it. */
export interface RedeployChanges {
  /** Replaces the deployed modes. */
  readonly modes?: readonly Mode[];
  readonly crashRate?: number;
  readonly batchSize?: number;
}

/** Context the outputs cannot show, for the person to add. */
const UNSEEN = [
  'alarmEmail',
  'markerRetentionDays',
  'batchSize',
  'maxReceiveCount',
  'providerLostResponseRate',
] as const;

/**
 * The command that redeploys a stack from this checkout, with the context its outputs reveal
 * (crash rate and seed, provisioned pollers, the outbox relay, the modes), so that following the
 * advice does not quietly reset a deliberate setting, and with the `changes` asked for.
 *
 * What the outputs cannot reveal (alarmEmail, markerRetentionDays, batchSize, maxReceiveCount,
 * providerLostResponseRate) is named for the person to add.
 */
export function redeployCommand(
  stack: RedeployTarget,
  outputs: ReadonlyMap<string, string>,
  changes: RedeployChanges = {},
): string {
  const { modes } = changes;
  const context: string[] = [];
  if (stack.target === 'aws' || stack.stackName !== DEFAULT_STACK_NAME)
    context.push(`stackName=${stack.stackName}`);
  // A change is written out even at its default; a deployed value only when it is not the default.
  const crashRate = outputs.get(STACK_OUTPUTS.crashRate);
  if (changes.crashRate !== undefined) context.push(`crashRate=${changes.crashRate}`);
  else if (crashRate !== undefined && Number(crashRate) !== DEFAULT_DEPLOYMENT.crashRate)
    context.push(`crashRate=${crashRate}`);
  const crashSeed = outputs.get(STACK_OUTPUTS.crashSeed);
  if (crashSeed !== undefined && crashSeed !== DEFAULT_DEPLOYMENT.crashSeed)
    context.push(`crashSeed=${crashSeed}`);
  if (changes.batchSize !== undefined) context.push(`batchSize=${changes.batchSize}`);

  const deployed = outputs.get(STACK_OUTPUTS.deployedModes)?.split(',') ?? [];
  const wanted = modes ?? MODE_NAMES.filter((mode) => deployed.includes(mode));
  const all = MODE_NAMES.every((mode) => wanted.includes(mode));
  if (modes !== undefined || deployed.length > 0) context.push(`modes=${all ? 'all' : wanted.join(',')}`);
  // modes=all brings the relay; otherwise it is asked for.
  if (!all && outputs.has(STACK_OUTPUTS.outboxTableName)) context.push('outboxRelay=true');
  // One setting for the whole stack: any deployed mode's Scaling output says it.
  const pollers = deployed
    .map((mode) => pollersOfScaling(outputs.get(modeOutputs(mode as Mode).scaling)))
    .find((range) => range !== undefined);
  if (pollers) context.push(`provisionedPollers=${pollers.minimumPollers}:${pollers.maximumPollers}`);

  const flags = context.map((entry) => `-c ${entry}`).join(' ');
  const command =
    stack.target === 'localstack'
      ? `npm run deploy:local${flags === '' ? '' : ` -- ${flags}`}`
      : `npx cdk deploy ${flags}`;
  const unseen = UNSEEN.filter((key) => !(key in changes));
  return `\`${command}\`, plus any ${unseen.slice(0, -1).join(', ')} or ${unseen.at(-1)} you deployed it with`;
}
