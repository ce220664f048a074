import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { PROJECT_ROOT } from '../../stack/bundling.js';

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
  'explorer.tgz': 'packages/explorer',
};

/**
 * A team's environment: this machine's PATH without this repository's folders (under `npm test` it
 * holds node_modules/.bin, whose esbuild aws-cdk-lib would find on PATH), HOME (npm's cache) and
 * TMPDIR, and nothing of ours.
 */
function teamEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const keep = ['HOME', 'TMPDIR', 'LANG'];
  const path = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((entry) => entry !== '' && !resolve(entry).startsWith(resolve(PROJECT_ROOT)))
    .join(delimiter);
  return {
    PATH: path,
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
 * A copy of the package at `path`, with the repository's packages linked as its node_modules (its
 * TypeScript and the types its build needs), packed there by `npm pack` with its own prepack, to
 * `<root>/<tarball>`.
 */
async function packCopy(path: string, root: string, tarball: string): Promise<void> {
  const copy = join(root, 'build', path);
  await cp(join(PROJECT_ROOT, path), copy, {
    recursive: true,
    filter: (source) => !/[\\/](dist|node_modules)$/.test(source),
  });
  await symlink(join(PROJECT_ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir');
  // npm pack as a publisher runs it: prepack builds dist/ (a clean one), postpack removes it.
  const destination = join(root, 'packed', tarball);
  await mkdir(destination, { recursive: true });
  await must(`npm pack of ${path}`, run('npm', ['pack', '--pack-destination', destination], copy, teamEnv()));
  const made = (await readdir(destination)).filter((name) => name.endsWith('.tgz'));
  if (made.length !== 1) throw new Error(`npm pack of ${path} made ${made.length} tarballs`);
  await rename(join(destination, made[0] as string), join(root, tarball));
}

/**
 * The fixture's lockfile pins every package but ours, whose entries say what their manifests say
 * today (their dependencies and peers), so that editing a manifest does not put the committed
 * lockfile out of step. A new dependency of ours still needs the lockfile made again.
 */
async function lockOwnPackagesAsPacked(dir: string): Promise<void> {
  const path = join(dir, 'package-lock.json');
  const lock = JSON.parse(await readFile(path, 'utf8')) as {
    packages: Record<string, Record<string, unknown>>;
  };
  for (const packagePath of Object.values(PACKAGES)) {
    const manifest = JSON.parse(await readFile(join(PROJECT_ROOT, packagePath, 'package.json'), 'utf8'));
    const entry = lock.packages[`node_modules/${manifest.name}`];
    if (entry === undefined) throw new Error(`the fixture's lockfile has no ${manifest.name}`);
    for (const field of [
      'version',
      'license',
      'dependencies',
      'engines',
      'peerDependencies',
      'peerDependenciesMeta',
    ]) {
      if (manifest[field] === undefined) delete entry[field];
      else entry[field] = manifest[field];
    }
  }
  await writeFile(path, `${JSON.stringify(lock, null, 2)}\n`);
}

/**
 * Builds each package's dist/ and packs it, each in a copy of its own (so no dist/ is left in the
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
    await lockOwnPackagesAsPacked(dir);
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
