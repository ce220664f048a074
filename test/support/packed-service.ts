import { execFile } from 'node:child_process';
import { cp, mkdtemp, rename, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../lib/bundling.js';

/**
 * A service of a team's own, in a temporary folder outside the repository, with the workspace
 * packages installed from `npm pack` tarballs as a team installs them: test/fixtures/packed-service/
 * (a handler on the effectively-once core, a CDK app with SqsConsumer, its committed lockfile, so
 * no version floats), `npm ci --prefer-offline` from the cache the repository's `npm ci` filled.
 *
 * Nothing of this repository's resolution reaches it: no source condition (which would load the
 * packages' src/ instead of their dist/), no npm_config_* of an outer `npm test`, no Vitest variables.
 */
export interface PackedService {
  /** The service's folder: package.json, node_modules/, src/, bin/. */
  readonly dir: string;
  /** Runs a command of the service (`npx …`) in its folder, in a team's environment plus `env`. */
  readonly run: (command: string, args: readonly string[], env?: Record<string, string>) => Promise<Result>;
  /** Seconds each step took: pack, install. */
  readonly seconds: { readonly pack: number; readonly install: number };
  readonly dispose: () => Promise<void>;
}

export interface Result {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

const FIXTURE = join(PROJECT_ROOT, 'test/fixtures/packed-service');
const PACKAGES = {
  'consumer-cores.tgz': 'packages/consumer-cores',
  'cdk-constructs.tgz': 'packages/cdk-constructs',
};

/** A team's environment: this machine's PATH, HOME (npm's cache) and TMPDIR, and nothing of ours. */
function teamEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const keep = ['PATH', 'HOME', 'TMPDIR', 'LANG'];
  return {
    ...Object.fromEntries(keep.flatMap((name) => (process.env[name] ? [[name, process.env[name]]] : []))),
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    CDK_DISABLE_CLI_TELEMETRY: 'true',
    NO_COLOR: '1',
    ...extra,
  };
}

function run(
  command: string,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs = 120_000,
): Promise<Result> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd, env, timeout: timeoutMs, maxBuffer: 32 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

async function must(step: string, result: Promise<Result>): Promise<Result> {
  const done = await result;
  if (done.code !== 0) throw new Error(`${step} failed (exit ${done.code}):\n${done.stdout}\n${done.stderr}`);
  return done;
}

/**
 * A copy of the package at `path` (what `files` would pack, plus its tsconfigs), its dist/ built
 * there with the repository's TypeScript and packages (node_modules linked), packed to
 * `<root>/<tarball>`: what `npm pack` in the package runs through its prepack.
 */
async function packCopy(path: string, root: string, tarball: string): Promise<void> {
  const copy = join(root, 'build', path);
  await cp(join(PROJECT_ROOT, path), copy, {
    recursive: true,
    filter: (source) => !/[\\/](dist|node_modules)$/.test(source),
  });
  await symlink(join(PROJECT_ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir');
  const tsc = join(PROJECT_ROOT, 'node_modules/typescript/bin/tsc');
  await must(
    `the build of ${path}`,
    run(process.execPath, [tsc, '-p', 'tsconfig.build.json'], copy, teamEnv()),
  );
  // Built just above: no prepack.
  const packed = await must(
    `npm pack of ${path}`,
    run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', root], copy, teamEnv()),
  );
  const [made] = JSON.parse(packed.stdout) as { filename: string }[];
  if (made === undefined) throw new Error(`npm pack made no tarball of ${path}`);
  await rename(join(root, made.filename), join(root, tarball));
}

/**
 * Builds both packages' dist/ and packs them, each in a copy of its own (so no dist/ is left in the
 * repository, where a resolver missing the source condition would quietly load it), then installs
 * them into a copy of the fixture.
 */
export async function packedService(): Promise<PackedService> {
  const root = await mkdtemp(join(tmpdir(), 'packed-service-'));
  try {
    let started = Date.now();
    await Promise.all(Object.entries(PACKAGES).map(([tarball, path]) => packCopy(path, root, tarball)));
    const pack = (Date.now() - started) / 1000;

    const dir = join(root, 'service');
    await cp(FIXTURE, dir, { recursive: true });
    started = Date.now();
    await must(
      'npm ci',
      run('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], dir, teamEnv()),
    );
    const install = (Date.now() - started) / 1000;
    return {
      dir,
      run: (command, args, env) => run(command, args, dir, teamEnv(env)),
      seconds: { pack, install },
      dispose: () => rm(root, { recursive: true, force: true }),
    };
  } catch (error) {
    await rm(root, { recursive: true, force: true });
    throw error;
  }
}
