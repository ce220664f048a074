import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';

/** The esbuild this package is tested with, in the install command its refusal gives. */
export const ESBUILD_INSTALL = 'npm install --save-dev esbuild@0.28.2';

/** An esbuild NodejsFunction can run without Docker. */
export interface LocalEsbuild {
  /** What it reports: its package.json's `version`, or the output of `esbuild --version`. */
  readonly version: string;
  /**
   * `package`: Node resolves `esbuild` from the folder searched (NodejsFunction then runs it through
   * the package manager: `npx --no-install esbuild` with npm); `path`: an `esbuild` executable on PATH.
   */
  readonly source: 'package' | 'path';
}

export interface FindLocalEsbuildOptions {
  /**
   * The PATH searched for an `esbuild` executable when no package resolves.
   * @default process.env.PATH
   */
  readonly searchPath?: string;
}

/**
 * The local esbuild NodejsFunction would find, looked for the way aws-cdk-lib 2.276.0 looks
 * (aws-lambda-nodejs/lib/package-installation.js, `PackageInstallation.detect('esbuild')`): first
 * `esbuild/package.json` resolved as a Node package, then `esbuild --version` run from PATH. Where
 * aws-cdk-lib finds none, it bundles in Docker instead, saying only "esbuild cannot run locally.
 * Switching to Docker bundling." on stderr; this finds out first.
 *
 * aws-cdk-lib resolves the package from its own folder; this resolves it from `fromDir` (Node's
 * resolution, walking up through each `node_modules`), so that a project's root can be checked.
 *
 * @param fromDir the folder Node's resolution starts from
 * @returns the esbuild found, or undefined if there is none
 * @example
 * if (!findLocalEsbuild(process.cwd())) throw new Error('no esbuild: npm install --save-dev esbuild');
 */
export function findLocalEsbuild(
  fromDir: string,
  options: FindLocalEsbuildOptions = {},
): LocalEsbuild | undefined {
  const version = packageVersion(fromDir);
  if (version !== undefined) return { version, source: 'package' };
  const proc = spawnSync('esbuild', ['--version'], {
    env: { ...process.env, PATH: options.searchPath ?? process.env.PATH },
    encoding: 'utf8',
  });
  return proc.status === 0 && !proc.error ? { version: proc.stdout.trim(), source: 'path' } : undefined;
}

function packageVersion(fromDir: string): string | undefined {
  try {
    // createRequire takes a file; resolution starts from its folder (the file need not exist).
    const manifest = createRequire(join(resolve(fromDir), 'package.json')).resolve('esbuild/package.json');
    const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version?: unknown };
    return typeof version === 'string' ? version : undefined;
  } catch {
    return undefined;
  }
}

/** The folder aws-cdk-lib's NodejsFunction resolves esbuild from (its aws-lambda-nodejs module). */
export const CDK_NODEJS_DIR = dirname(
  createRequire(import.meta.url).resolve('aws-cdk-lib/aws-lambda-nodejs'),
);

export interface LocalEsbuildCheck extends FindLocalEsbuildOptions {
  /** The project the function is bundled in: where the bundling runs esbuild. */
  readonly projectRoot: string;
  /**
   * Where aws-cdk-lib resolves esbuild from.
   * @default CDK_NODEJS_DIR
   */
  readonly cdkDir?: string;
}

/**
 * Why NodejsFunction would bundle in Docker: no esbuild from the project's root, or none that
 * aws-cdk-lib itself finds (its own folder, then PATH); undefined when local bundling will run.
 * Both, because aws-cdk-lib decides on the second and runs esbuild in the first.
 */
export function missingLocalEsbuild(check: LocalEsbuildCheck): string | undefined {
  const options = check.searchPath !== undefined ? { searchPath: check.searchPath } : {};
  if (!findLocalEsbuild(check.projectRoot, options)) {
    return `no local esbuild found from ${check.projectRoot}`;
  }
  const cdkDir = check.cdkDir ?? CDK_NODEJS_DIR;
  if (!findLocalEsbuild(cdkDir, options)) {
    return `aws-cdk-lib finds no esbuild from ${cdkDir} nor on PATH, though ${check.projectRoot} has one`;
  }
  return undefined;
}
