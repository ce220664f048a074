import { execFile } from 'node:child_process';
import { access, cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * functions/core/ is what teams copy into their own services. This copies it into an empty
 * directory as a package of its own, with only the dependencies the copy would install (the same
 * list test/unit/core-folder.test.ts allows), and checks that it type-checks under a strict
 * tsconfig without @types/node and that its own tests pass there.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CORE = join(ROOT, 'functions/core');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const VITEST = join(ROOT, 'node_modules/vitest/vitest.mjs');

const DEPENDENCIES = ['@aws-sdk/client-dynamodb', '@aws-sdk/lib-dynamodb', '@aws-sdk/client-sqs', 'valibot'];
const DEV_DEPENDENCIES = ['@types/aws-lambda', 'typescript', 'vitest', 'aws-sdk-client-mock'];

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    lib: ['ES2023'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noUncheckedIndexedAccess: true,
    verbatimModuleSyntax: true,
    skipLibCheck: true,
    // No @types/* package joins the program unless a file imports it: above all not @types/node.
    types: [],
    noEmit: true,
  },
};

/**
 * A config file of the copy's own: without one, Vitest looks for one in every parent directory,
 * and the copy's tests would depend on where the temporary directory is. An .mjs, so that the
 * type-check (which includes every .ts) does not see it.
 */
const VITEST_CONFIG = "export default { test: { include: ['**/*.test.ts'] } };\n";

/**
 * The children get a clean environment, not this worker's: its VITEST_* variables would make the
 * copy's Vitest think it runs inside this one. The SDK clients only need a region and credentials
 * to construct; the tests never reach AWS.
 */
const CHILD_ENV: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  ...(process.env.TMPDIR !== undefined ? { TMPDIR: process.env.TMPDIR } : {}),
  AWS_REGION: 'eu-west-1',
  AWS_ACCESS_KEY_ID: 'core-copy',
  AWS_SECRET_ACCESS_KEY: 'core-copy',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  NO_COLOR: '1',
};

async function installedVersion(pkg: string): Promise<string> {
  const manifest = JSON.parse(await readFile(join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8'));
  return manifest.version;
}

async function versions(packages: readonly string[]): Promise<Record<string, string>> {
  return Object.fromEntries(
    await Promise.all(packages.map(async (pkg) => [pkg, await installedVersion(pkg)])),
  );
}

/**
 * Instead of `npm install` (no network, and minutes): node_modules/ holds a link to each allowed
 * package and nothing else. Their own dependencies still resolve, since Node and TypeScript follow
 * a link to its real path under the repository's node_modules/; the core's own imports resolve
 * from the copy, where only the allowed packages are.
 */
async function linkDependencies(dir: string): Promise<void> {
  for (const pkg of [...DEPENDENCIES, ...DEV_DEPENDENCIES]) {
    const link = join(dir, 'node_modules', pkg);
    await mkdir(dirname(link), { recursive: true });
    await symlink(join(ROOT, 'node_modules', pkg), link, 'dir');
  }
}

/** A fresh temporary directory holding functions/core/ as a standalone package. */
async function copyCore(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'core-copy-'));
  await cp(CORE, dir, { recursive: true });
  const pkg = {
    name: 'consumer-core',
    private: true,
    type: 'module',
    dependencies: await versions(DEPENDENCIES),
    devDependencies: await versions(DEV_DEPENDENCIES),
  };
  await writeFile(join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  await writeFile(join(dir, 'tsconfig.json'), `${JSON.stringify(TSCONFIG, null, 2)}\n`);
  await writeFile(join(dir, 'vitest.config.mjs'), VITEST_CONFIG);
  await linkDependencies(dir);
  return dir;
}

interface Result {
  readonly code: number;
  readonly output: string;
}

/** Runs a Node script to its end; a failure is a result to assert on, not a rejection. */
function node(args: readonly string[], cwd: string): Promise<Result> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      args,
      { cwd, env: CHILD_ENV, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ code, output: `${stdout}${stderr}` });
      },
    );
  });
}

const tsc = (dir: string, ...flags: string[]) => node([TSC, '-p', dir, ...flags], dir);

/** The folder's test files, relative to it; read from the source, not the copy and its links. */
async function coreTestFiles(): Promise<string[]> {
  const entries = await readdir(CORE, { recursive: true });
  return entries.filter((entry) => entry.endsWith('.test.ts')).sort();
}

describe('functions/core/ copied into a package of its own', () => {
  const dirs: string[] = [];
  let copy: string;
  let expectedTestFiles: string[];

  beforeAll(async () => {
    expectedTestFiles = await coreTestFiles();
    copy = await copyCore();
    dirs.push(copy);
  });

  afterAll(async () => {
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  /** One type-check for both tests below: --listFiles checks the program, then lists its files. */
  let checked: Promise<Result> | undefined;
  const typeCheck = () => {
    checked ??= tsc(copy, '--listFiles');
    return checked;
  };

  it('type-checks under a strict tsconfig', async () => {
    const result = await typeCheck();
    expect(result.code, result.output).toBe(0);
  });

  it('leaves @types/node out of the program', async () => {
    // A dependency's `/// <reference types="node" />` would bring Node's globals back silently.
    const result = await typeCheck();
    expect(result.code, result.output).toBe(0);
    const files = result.output.split('\n').filter((file) => file.trim() !== '');
    expect(files.some((file) => file.startsWith(copy))).toBe(true);
    const nodeTypes = files.filter((file) => file.includes('/@types/node/'));
    expect(nodeTypes).toEqual([]);
  });

  it('passes its own tests', async () => {
    const report = join(copy, 'vitest-report.json');
    const result = await node(
      [
        VITEST,
        'run',
        '--root',
        copy,
        '--config',
        join(copy, 'vitest.config.mjs'),
        '--reporter=default',
        '--reporter=json',
        `--outputFile.json=${report}`,
      ],
      copy,
    );
    expect(result.code, result.output).toBe(0);
    const ran: { testResults: { name: string; status: string }[] } = JSON.parse(
      await readFile(report, 'utf8'),
    );
    // Every test file the folder has, not merely "some": a file that stopped being collected fails here.
    expect(expectedTestFiles.length).toBeGreaterThan(0);
    expect(ran.testResults.map((file) => relative(copy, file.name)).sort()).toEqual(expectedTestFiles);
    expect(ran.testResults.every((file) => file.status === 'passed')).toBe(true);
  });

  it('fails the type-check when a file imports a package the copy does not install', async () => {
    // The repository's node_modules/ has Powertools: were the copy to see it, this would compile.
    // A file of its own beside the core's, in a program of its own: the core's files resolve
    // packages from the same folder, and the check stays one small program, not a second copy.
    // Written after the copy's own type-check, which would otherwise include it.
    await expect(
      access(join(ROOT, 'node_modules/@aws-lambda-powertools/logger/package.json')),
    ).resolves.toBeUndefined();
    await typeCheck();
    await writeFile(
      join(copy, 'probe.ts'),
      "import { Logger } from '@aws-lambda-powertools/logger';\nexport const probe = Logger;\n",
    );
    await writeFile(
      join(copy, 'tsconfig.probe.json'),
      `${JSON.stringify({ extends: './tsconfig.json', include: [], files: ['probe.ts'] })}\n`,
    );
    const result = await node([TSC, '-p', join(copy, 'tsconfig.probe.json')], copy);
    expect(result.code).not.toBe(0);
    expect(result.output).toMatch(/TS2307: Cannot find module '@aws-lambda-powertools\/logger'/);
  });
});
