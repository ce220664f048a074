/** A per-mode setting as contract/topology.ts gives it, for the defaults that quote it. */
import { MODE_NAMES, MODES, type ModeSettings } from '../../../contract/topology.js';

/** A setting as contract/topology.ts gives it: the one value every mode shares, or each distinct one. */
export function topologySetting(
  setting: keyof Pick<ModeSettings, 'batchSize' | 'maxConcurrency' | 'maxReceiveCount'>,
) {
  const values = [...new Set(MODE_NAMES.map((mode) => MODES[mode][setting]))];
  return { largest: Math.max(...values), text: `each mode's in contract/topology.ts: ${values.join('/')}` };
}
