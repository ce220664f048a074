import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { STACK_OUTPUTS } from '../../contract/stack-outputs.js';
import { DEFAULT_MODES, MODE_NAMES } from '../../contract/topology.js';
import { handlerEntry, PROJECT_ROOT } from '../../lib/bundling.js';

const run = promisify(execFile);
const outdir = mkdtempSync(join(tmpdir(), 'cdk-synth-'));

describe('cdk synth (the CLI, as a user runs it, offline)', () => {
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  it('bundles every handler with local esbuild and emits the expected template', async () => {
    await run('npx', ['cdk', 'synth', '--quiet', '--output', outdir], {
      env: { ...process.env, CDK_DISABLE_CLI_TELEMETRY: 'true' },
      // The default modes' handlers and the verifier's bundled one after the other.
      timeout: 170_000,
    });

    const template = JSON.parse(readFileSync(join(outdir, 'DeliverySemantics.template.json'), 'utf8')) as {
      Resources: Record<string, { Type: string }>;
    };
    const count = (type: string) => Object.values(template.Resources).filter((r) => r.Type === type).length;
    // No context: the default run's modes, each with its queue pair, consumer, mapping and DLQ alarm.
    expect(count('AWS::SQS::Queue')).toBe(2 * DEFAULT_MODES.length);
    // The consumers and the verifier: no payment provider (no charge mode), no outbox relay (not asked).
    expect(count('AWS::Lambda::Function')).toBe(DEFAULT_MODES.length + 1);
    expect(count('AWS::Lambda::EventSourceMapping')).toBe(DEFAULT_MODES.length);
    // The ledger and Powertools' idempotency records (powertools-idempotency is a default mode).
    expect(count('AWS::DynamoDB::Table')).toBe(2);
    // The DLQ alarms and their topic, as the CLI synthesizes them (cdk-nag ran on this synth).
    expect(count('AWS::CloudWatch::Alarm')).toBe(DEFAULT_MODES.length);
    expect(count('AWS::SNS::Topic')).toBe(1);
    const outputs = (template as { Outputs?: Record<string, { Value: unknown }> }).Outputs ?? {};
    expect(outputs[STACK_OUTPUTS.deployedModes]?.Value).toBe(DEFAULT_MODES.join(','));
  }, 180_000);

  it('refuses a wrong -c value in one line that says what to pass, with no stack trace', async () => {
    const failed = await run('npx', ['cdk', 'synth', '--quiet', '-c', 'modes=exactly-once'], {
      env: { ...process.env, CDK_DISABLE_CLI_TELEMETRY: 'true' },
      timeout: 60_000,
    }).then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain('error: context modes names exactly-once, which the topology lacks');
    expect(failed?.stderr).not.toMatch(/\n\s+at /);
  }, 90_000);

  it("refuses pollers out of aws-cdk-lib's ranges in one line naming the context, with no stack trace", async () => {
    // The app as the CLI runs it (cdk.json's "app"), given the context the way the CLI passes it.
    const failed = await run(join(PROJECT_ROOT, 'node_modules/.bin/tsx'), ['bin/app.ts'], {
      cwd: PROJECT_ROOT,
      env: {
        ...process.env,
        CDK_CONTEXT_JSON: JSON.stringify({ provisionedPollers: '10:2' }),
        CDK_OUTDIR: mkdtempSync(join(outdir, 'pollers-')),
      },
      timeout: 60_000,
    }).then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain(
      'error: context provisionedPollers=10:2 is refused by aws-cdk-lib: Minimum provisioned pollers must be ' +
        'less than or equal to maximum provisioned pollers',
    );
    expect(failed?.stderr).not.toMatch(/\n\s+at /);
  }, 90_000);

  it('has one handler file per mode of the topology', () => {
    for (const mode of [...MODE_NAMES, 'verifier']) expect(existsSync(handlerEntry(mode))).toBe(true);
  });
});
