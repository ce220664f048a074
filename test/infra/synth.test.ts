import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { MODE_NAMES } from '../../contract/topology.js';
import { handlerEntry } from '../../lib/bundling.js';

const run = promisify(execFile);
const outdir = mkdtempSync(join(tmpdir(), 'cdk-synth-'));

describe('cdk synth (the CLI, as a user runs it, offline)', () => {
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  it('bundles every handler with local esbuild and emits the expected template', async () => {
    await run('npx', ['cdk', 'synth', '--quiet', '--output', outdir], {
      env: { ...process.env, CDK_DISABLE_CLI_TELEMETRY: 'true' },
      // Nine handlers bundled one after the other: about 40 s alone, much more beside other tests.
      timeout: 170_000,
    });

    const template = JSON.parse(readFileSync(join(outdir, 'DeliverySemantics.template.json'), 'utf8')) as {
      Resources: Record<string, { Type: string }>;
    };
    const count = (type: string) => Object.values(template.Resources).filter((r) => r.Type === type).length;
    // Every mode's pair, and the outbox relay's on-failure queue.
    expect(count('AWS::SQS::Queue')).toBe(2 * MODE_NAMES.length + 1);
    // The consumers, the verifier, the payment provider and the outbox relay.
    expect(count('AWS::Lambda::Function')).toBe(MODE_NAMES.length + 3);
    expect(count('AWS::Lambda::EventSourceMapping')).toBe(MODE_NAMES.length + 1);
    expect(count('AWS::DynamoDB::Table')).toBe(5);
    // The DLQ alarms, the relay's two (iterator age, on-failure queue) and their topic, as the CLI
    // synthesizes them (cdk-nag ran on this synth).
    expect(count('AWS::CloudWatch::Alarm')).toBe(MODE_NAMES.length + 2);
    expect(count('AWS::SNS::Topic')).toBe(1);
  }, 180_000);

  it('has one handler file per mode of the topology', () => {
    for (const mode of [...MODE_NAMES, 'verifier']) expect(existsSync(handlerEntry(mode))).toBe(true);
  });
});
