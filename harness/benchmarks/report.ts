import type { Mode } from '../../contract/topology.js';
import type { ModeCost, ModeUsage } from './cost-model.js';
import type { CellResult } from './end-to-end.js';
import type { CancelledTransactionCase, MeteredMode } from './metered-run.js';
import type { PRICES } from './prices.js';
import type { ScalePoint } from './scale.js';
import type { YardstickRun } from './yardstick.js';

export interface CellRatios {
  readonly batchSize: number;
  readonly concurrency: number;
  /** Median end to end ÷ median floor, per mode. */
  readonly endToEndOverFloor: Partial<Record<Mode, number>>;
  /** Median end to end of effectively-once ÷ at-least-once; null when either was not run. */
  readonly effectivelyOnceOverAtLeastOnce: number | null;
  /** Median end to end of powertools-idempotency ÷ effectively-once; null when either was not run. */
  readonly powertoolsOverEffectivelyOnce: number | null;
}

export interface Target {
  readonly name: string;
  readonly met: boolean;
  readonly measured: string;
}

/** reports/bench-<timestamp>.json: the same shape for --quick and the full bench. */
export interface BenchReport {
  readonly kind: 'quick' | 'full';
  readonly startedAt: string;
  readonly durationSeconds: number;
  readonly machine: {
    readonly cpus: number;
    readonly cpuModel: string;
    readonly node: string;
    readonly platform: string;
  };
  readonly endToEnd: readonly CellResult[];
  readonly ratios: readonly CellRatios[];
  readonly metered: {
    readonly messages: number;
    readonly modes: Partial<Record<Mode, MeteredMode>>;
    readonly cancelledTransaction: CancelledTransactionCase;
    /** How units were counted, and the rule for cancelled transactions. */
    readonly notes: readonly string[];
  };
  readonly cost: Partial<Record<Mode, ModeCost>>;
  /**
   * At-least-once in its production shape (yardstick.ts): one UpdateItem per message, no
   * application record; absent when at-least-once was not run (it borrows its Lambda and SQS).
   */
  readonly yardstick?: YardstickReport;
  readonly prices: typeof PRICES;
  readonly scale: readonly ScalePoint[];
  readonly targets: readonly Target[];
  /** Sections that failed (a scale point); the rest of the report stands. */
  readonly failures: readonly string[];
}

/** The yardstick's row: counted in the metered run, priced like the modes, checked by the money. */
export interface YardstickReport {
  /** `at-least-once (production shape)` */
  readonly name: string;
  readonly usage: ModeUsage;
  readonly dynamodbByOperation: YardstickRun['dynamodbByOperation'];
  readonly reportedWriteUnits: number;
  readonly failedRecords: number;
  readonly money: YardstickRun['money'];
  readonly cost: ModeCost;
  /** effectively-once's price ÷ the yardstick's; null when effectively-once was not run. */
  readonly effectivelyOnceOverYardstick: { readonly writeUnits: number; readonly usd: number } | null;
}
