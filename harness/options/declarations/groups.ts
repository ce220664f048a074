/** The groups the options stand in under --help: their headings, order and notes. */

export interface GroupDeclaration {
  readonly heading: string;
  /** Said after the group's options. */
  readonly note?: string;
  /** The note is said only where this option is accepted too (it is about that option). @default always */
  readonly noteWith?: string;
}

/** Where an option stands in --help: each group under its heading, in this order. */
export const GROUPS = {
  target: { heading: 'Targets' },
  deployed: {
    heading: 'Deployed targets (aws, localstack)',
    note:
      'Crash rate, crash seed and batch size are deployment settings there: the run reads and prints them; ' +
      'passing a different --crash-rate or --batch-size is refused with how to redeploy.',
    noteWith: 'crash-rate',
  },
  run: { heading: 'Options' },
  faults: {
    heading:
      'Faults (each drawn per event from --seed, the same schedule for every mode; counted in the report)',
    note:
      'Hot keys: --accounts 1 --concurrency 8 makes transactions conflict on AWS; DynamoDB Local serializes ' +
      'them instead, so locally conflicts come from --throttle-rate. Retries are counted.',
  },
  general: { heading: 'Output and help' },
} as const satisfies Record<string, GroupDeclaration>;

export type GroupName = keyof typeof GROUPS;
