/** The experiment's own settings: local concurrency, visibility, receives, cold starts; the redrive. */
import { DEFAULT_MODES } from '../../../contract/topology.js';
import {
  LOCAL_MAX_CONCURRENCY,
  localVisibilityTimeoutSeconds,
  MIN_LOCAL_VISIBILITY_TIMEOUT_SECONDS,
} from '../../environments/local-timing.js';
import { EMBEDDED_SETTING } from './target-scopes.js';
import { topologySetting } from './topology-setting.js';
import type { OptionDeclaration } from './types.js';

export const EXPERIMENT_OPTIONS = {
  concurrency: {
    kind: 'integer',
    min: 2,
    max: 1000,
    placeholder: 'C',
    group: 'run',
    targets: EMBEDDED_SETTING,
    help:
      "batches in flight per mode (the event source mapping's maximum concurrency); one DynamoDB Local " +
      'serves every mode, so more callers only make each batch slower',
    entryPoints: {
      experiment: {
        defaultText: `${LOCAL_MAX_CONCURRENCY}; deployed stacks: ${topologySetting('maxConcurrency').text}`,
      },
    },
  },
  'visibility-timeout': {
    kind: 'integer',
    min: MIN_LOCAL_VISIBILITY_TIMEOUT_SECONDS,
    max: 43_200,
    placeholder: 'S',
    group: 'run',
    targets: EMBEDDED_SETTING,
    help:
      'local queue visibility timeout in seconds; short, so crashed batches come back quickly; the local ' +
      "function timeout is 1 s less (and the batching window's 1 s above batch 10, and with --cold-starts the " +
      "inits' allowance); a charge mode gets twice " +
      'as long (each record also waits for the payment provider)',
    entryPoints: {
      experiment: {
        defaultText:
          'the function timeout, max(2, ⌈batch × concurrency × modes / 40⌉), + 1, + 1 above batch 10, ' +
          '+ ⌈environments / 3⌉ with --cold-starts: ' +
          `${localVisibilityTimeoutSeconds(topologySetting('batchSize').largest, LOCAL_MAX_CONCURRENCY, DEFAULT_MODES.length)} at ` +
          `batch ${topologySetting('batchSize').largest} × concurrency ${LOCAL_MAX_CONCURRENCY} × ${DEFAULT_MODES.length} modes`,
      },
    },
  },
  'max-receive-count': {
    kind: 'integer',
    min: 1,
    max: 1000,
    placeholder: 'N',
    group: 'run',
    targets: EMBEDDED_SETTING,
    help: 'receives before a message moves to its DLQ (a lower value dead-letters poison sooner)',
    entryPoints: { experiment: { defaultText: topologySetting('maxReceiveCount').text } },
  },
  'cold-starts': {
    kind: 'flag',
    group: 'run',
    targets: EMBEDDED_SETTING,
    help:
      'start each execution environment on its first invocation, as on-demand Lambda does (the first ' +
      'batches then all cold-start at once, so the local visibility timeout allows for their inits)',
    entryPoints: {
      experiment: { defaultText: "off: every mode's environments are initialised before the first message" },
    },
  },
  redrive: {
    kind: 'flag',
    group: 'run',
    help:
      "after the first drain and verification, move every mode's DLQ back to its source queue as a DLQ " +
      'redrive does (embedded: by copy, with a redriveCount attribute so crash and fault draws differ; ' +
      'aws, localstack: StartMessageMoveTask), drain and verify again; the report leads with the state ' +
      "after the redrive, then the redrive's counts and the first drain (docs/redrive.md)",
    entryPoints: { experiment: {} },
  },
  'redrive-after': {
    kind: 'integer',
    min: 0,
    max: 86_400,
    placeholder: 'S',
    group: 'run',
    requires: { option: 'redrive', why: 'it says when the redrive starts' },
    help: 'seconds from the end of the first drain to the redrive (up to a day: past a marker or key expiry)',
    entryPoints: { experiment: { default: 0, defaultText: '0: as soon as the first drain is verified' } },
  },
  'marker-ttl': {
    kind: 'integer',
    min: 10,
    max: 86_400 * 30,
    placeholder: 'S',
    group: 'run',
    targets: EMBEDDED_SETTING,
    help:
      "how long the dedupe records remember an event (effectively-once's marker, powertools-idempotency's " +
      'record); the age guard refuses events older than this less its margin (docs/retention.md)',
    entryPoints: {
      experiment: { defaultText: 'the deployed default, 30 days (CDK context markerRetentionDays)' },
    },
  },
  'no-age-guard': {
    kind: 'flag',
    group: 'run',
    targets: EMBEDDED_SETTING,
    help:
      'switch off the age guard of the consumers that dedupe: an event older than its dedupe record can ' +
      'remember is applied instead of refused (shows what a late redrive does without it)',
    entryPoints: { experiment: { defaultText: 'guard on: such events are refused (tooOldToDedupe)' } },
  },
} as const satisfies Record<string, OptionDeclaration>;
