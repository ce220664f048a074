import type { IncomingHttpHeaders } from 'node:http';
import { isMode, MODE_NAME_PATTERN, type Mode } from '../../../contract/topology.js';

/** What a request is counted under when its body names no mode (control-plane calls, the run manifest). */
export const NO_MODE = 'other';

/** `DynamoDB_20120810.TransactWriteItems` → `TransactWriteItems`; `''` without an X-Amz-Target. */
export function targetOperation(headers: IncomingHttpHeaders): string {
  const header = headers['x-amz-target'];
  const value = Array.isArray(header) ? header[0] : header;
  return value?.slice(value.lastIndexOf('.') + 1) ?? '';
}

const NAME = MODE_NAME_PATTERN.source.replace(/^\^|\$$/g, '');
const LEDGER_PARTITION = new RegExp(`MODE#(${NAME})`);
/** Powertools' idempotency record: its `id` is `<keyPrefix>#<hash>`, and the handlers' prefix is the mode. */
const IDEMPOTENCY_KEY = new RegExp(`"id":\\{"S":"(${NAME})#`);

/** The mode a request is about: the ledger's partition key names it, Powertools' record key starts with it. */
export function modeOf(body: Buffer): Mode | typeof NO_MODE {
  const text = body.toString('utf8');
  const mode = LEDGER_PARTITION.exec(text)?.[1] ?? IDEMPOTENCY_KEY.exec(text)?.[1];
  return mode !== undefined && isMode(mode) ? mode : NO_MODE;
}

export type JsonObject = Record<string, unknown>;

/** The body as a JSON object, or undefined when it is not one. */
export function parseJsonObject(body: Buffer): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as JsonObject)
      : undefined;
  } catch {
    return undefined;
  }
}
