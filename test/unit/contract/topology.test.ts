import { describe, expect, it } from 'vitest';
import { MODE_NAME_PATTERN, MODE_NAMES, MODES } from '../../../contract/topology.js';
import { modeOf } from '../../../harness/local-aws/dynamodb-proxy/request.js';

describe('the topology', () => {
  it.each(MODE_NAMES)(
    '%s: a name that can name queues, functions, ledger partitions and key prefixes',
    (mode) => {
      expect(mode).toMatch(MODE_NAME_PATTERN);
    },
  );

  it('refuses names that would break a key or a resource name', () => {
    for (const name of ['At-most-once', 'at_most_once', 'at#most', '-at', 'at-', 'at--most', '1st']) {
      expect(name).not.toMatch(MODE_NAME_PATTERN);
    }
    expect('outbox-v2').toMatch(MODE_NAME_PATTERN);
  });

  it.each(MODE_NAMES)(
    '%s: the DynamoDB proxy finds the mode in its ledger key and its Powertools key',
    (mode) => {
      expect(modeOf(Buffer.from(`{"Key":{"pk":{"S":"RUN#r1#MODE#${mode}"}}}`))).toBe(mode);
      expect(modeOf(Buffer.from(`{"Item":{"id":{"S":"${mode}#abc123"}}}`))).toBe(mode);
    },
  );

  it('has, for every mode, the crash point sentence and the proof a report and npm run proofs read', () => {
    for (const mode of MODE_NAMES) {
      expect(MODES[mode].crashPoint.length).toBeGreaterThan(10);
      expect(Object.keys(MODES[mode].proof.counts)).toContain('crashes');
    }
  });
});
