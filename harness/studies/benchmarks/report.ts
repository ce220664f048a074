import type { Mode } from '../../../contract/topology.js';
import type { ModeCost, ModeUsage } from './cost-model.js';
import type { CellResult } from './end-to-end.js';
import type { CancelledTransactionCase, MeteredMode } from './metered-run.js';
import type { PRICES } from './prices.js';
import type { ProductionRun } from './production-shape.js';
import type { ReadCostReport } from './read-cost.js';
import type { ScalePoint } from './scale.js';

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
   * Per mode with a production shape (production-shape.ts), measured when the mode was: its business
   * write alone, without the verifier's records. at-least-once's is the yardstick.
   */
  readonly production: Partial<Record<Mode, ProductionReport>>;
  /**
   * effectively-once's price ÷ the yardstick's (at-least-once in its production shape); null when
   * either was not measured.
   */
  readonly effectivelyOnceOverYardstick: { readonly writeUnits: number; readonly usd: number } | null;
  /** entry-upsert's balance read as entries grow (read-cost.ts); absent with --read-cost 0. */
  readonly readCost?: ReadCostReport;
  readonly prices: typeof PRICES;
  readonly scale: readonly ScalePoint[];
  readonly targets: readonly Target[];
  /** Sections that failed (a scale point); the rest of the report stands. */
  readonly failures: readonly string[];
}

/** A production-shape row: counted in the metered run, priced like the modes, checked by the money. */
export interface ProductionReport {
  /** `state-upsert (production shape)` */
  readonly name: string;
  /** What it writes per message, in words. */
  readonly writes: string;
  /** The write units per message it should cost (the delivery counter aside). */
  readonly expectedWriteUnitsPerMessage: number;
  readonly usage: ModeUsage;
  readonly dynamodbByOperation: ProductionRun['dynamodbByOperation'];
  readonly reportedWriteUnits: number;
  readonly failedRecords: number;
  readonly money: ProductionRun['money'];
  readonly cost: ModeCost;
}
