import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findLocalEsbuild, missingLocalEsbuild } from '@sqs-delivery-semantics/cdk-constructs';
import { afterAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../stack/bundling.js';

describe('findLocalEsbuild (packages/cdk-constructs/src/local-esbuild.ts)', () => {
  /** Outside the repository: Node's resolution from here reaches no node_modules with esbuild. */
  const empty = mkdtempSync(join(tmpdir(), 'no-esbuild-'));
  const binOfTheRepository = join(PROJECT_ROOT, 'node_modules/.bin');
  afterAll(() => rmSync(empty, { recursive: true, force: true }));

  it('finds the esbuild package the project installed, from its root or any folder below it', () => {
    expect(findLocalEsbuild(PROJECT_ROOT)).toEqual({ version: '0.28.2', source: 'package' });
    expect(findLocalEsbuild(join(PROJECT_ROOT, 'functions'), { searchPath: empty })).toEqual({
      version: '0.28.2',
      source: 'package',
    });
  });

  it('falls back to an esbuild executable on PATH, as aws-cdk-lib does', () => {
    expect(findLocalEsbuild(empty, { searchPath: binOfTheRepository })).toEqual({
      version: '0.28.2',
      source: 'path',
    });
  });

  it('finds none in an empty folder outside the repository with nothing on PATH', () => {
    expect(findLocalEsbuild(empty, { searchPath: empty })).toBeUndefined();
    expect(missingLocalEsbuild({ projectRoot: empty, searchPath: empty })).toBe(
      `no local esbuild found from ${empty}`,
    );
  });

  it('also refuses when aws-cdk-lib itself would find none, though the project has one (it decides on Docker)', () => {
    expect(missingLocalEsbuild({ projectRoot: PROJECT_ROOT, cdkDir: empty, searchPath: empty })).toBe(
      `aws-cdk-lib finds no esbuild from ${empty} nor on PATH, though ${PROJECT_ROOT} has one`,
    );
    // In this repository aws-cdk-lib's own folder resolves it: local bundling runs.
    expect(missingLocalEsbuild({ projectRoot: PROJECT_ROOT, searchPath: empty })).toBeUndefined();
  });
});
