import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CloudAssemblyError,
  readCloudAssembly,
} from '../../../../../harness/environments/assembly/cloud-assembly.js';

const FIXTURES = resolve(import.meta.dirname, '../../../../fixtures/assembly');
const UNUSUAL = join(FIXTURES, 'unusual');

describe('readCloudAssembly', () => {
  it('reads the only stack: its name, template, and the environment it was synthesized for', () => {
    const assembly = readCloudAssembly(UNUSUAL);
    expect(assembly.dir).toBe(UNUSUAL);
    expect(assembly.stackName).toBe('UnusualStackWithAFairlyLongNameForTruncation');
    expect(assembly.account).toBe('111122223333');
    expect(assembly.region).toBe('eu-west-1');
    expect(Object.keys(assembly.template.Resources)).toContain('Function');
  });

  it('finds a stack by its stack name or its artifact id', () => {
    expect(readCloudAssembly(UNUSUAL, 'Unusual').stackName).toBe(
      'UnusualStackWithAFairlyLongNameForTruncation',
    );
    expect(readCloudAssembly(UNUSUAL, 'UnusualStackWithAFairlyLongNameForTruncation').stackName).toBe(
      'UnusualStackWithAFairlyLongNameForTruncation',
    );
  });

  it('says what to do when the folder is no assembly', () => {
    const empty = mkdtempSync(join(tmpdir(), 'no-assembly-'));
    expect(() => readCloudAssembly(empty)).toThrow(
      new CloudAssemblyError(
        `${empty} is not a cloud assembly (no manifest.json): run \`npx cdk synth\` first, or point --assembly at cdk.out`,
      ),
    );
  });

  it('lists the stacks when several are there and none is named, or the named one is not', () => {
    const several = join(FIXTURES, 'several');
    expect(() => readCloudAssembly(several)).toThrow(
      `${several} has several stacks (First, Second): name one`,
    );
    expect(() => readCloudAssembly(several, 'Third')).toThrow(
      `${several} has no stack Third (it has First, Second)`,
    );
    expect(readCloudAssembly(several, 'Second').stackName).toBe('Second');
    expect(readCloudAssembly(several, 'Second').region).toBeUndefined();
  });
});

describe('assetFolderOfS3Key', () => {
  const assembly = readCloudAssembly(UNUSUAL);

  it("is the absolute folder the assets manifest publishes at the function's S3 key", () => {
    expect(assembly.assetFolderOfS3Key('aaa111.zip')).toBe(join(UNUSUAL, 'asset.aaa111'));
  });

  it('refuses a key nothing is published at, a file asset, a missing folder, a built asset', () => {
    expect(() => assembly.assetFolderOfS3Key('nothing.zip')).toThrow(
      "stack UnusualStackWithAFairlyLongNameForTruncation's asset manifest publishes nothing at S3 key nothing.zip",
    );
    expect(() => assembly.assetFolderOfS3Key('bbb222.json')).toThrow(
      'asset bbb222 (S3 key bbb222.json) is packaged as file: the local runtime runs a folder (zip of a directory) only',
    );
    expect(() => assembly.assetFolderOfS3Key('ccc333.zip')).toThrow(
      `asset folder ${join(UNUSUAL, 'asset.ccc333')} (S3 key ccc333.zip) is missing: run \`npx cdk synth\` again`,
    );
    expect(() => assembly.assetFolderOfS3Key('ddd444.zip')).toThrow(
      "asset ddd444 (S3 key ddd444.zip) is packaged as a command's output: the local runtime runs a folder (zip of a directory) only",
    );
  });

  it('refuses when the stack has no asset manifest', () => {
    expect(() => readCloudAssembly(join(FIXTURES, 'several'), 'First').assetFolderOfS3Key('x.zip')).toThrow(
      `stack First has no asset manifest in ${join(FIXTURES, 'several')}`,
    );
  });
});
