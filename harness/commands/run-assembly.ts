/**
 * `npm run assembly`: run what `cdk deploy` ships. Synthesizes the stack (or takes a `cdk.out`),
 * deploys that assembly to the local runtime (harness/environments/assembly/deploy.ts), and drives it with the
 * deployed driver, unchanged: `npm run experiment -- --target aws` in its own process, its SDK
 * pointed at the local deployment by AWS_ENDPOINT_URL and signing with the operator's credentials.
 * Every request is authorized by the template's own IAM; the denials are printed per mode.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { deploymentSettingsFromContext } from '../../contract/deployment-settings.js';
import { DEFAULT_STACK_NAME } from '../../contract/stack-outputs.js';
import { PROJECT_ROOT } from '../../stack/bundling.js';
import { denialsByFunction } from '../environments/assembly/denials.js';
import { type AssemblyDeployment, deployAssembly } from '../environments/assembly/deploy.js';
import { synthesizeAssembly } from '../environments/assembly/synthesize.js';

const HELP = `npm run assembly -- [options] [-- <npm run experiment options>]

Deploys the synthesized cloud assembly to the local runtime and runs the deployed driver
(npm run experiment -- --target aws) against it, every request authorized by the template's IAM.

  --assembly DIR      a synthesized cloud assembly (cdk.out); default: synthesize one now
  -c, --context K=V   CDK context for that synth, repeatable (docs/deploying.md lists the keys).
                      Local defaults, unless given: crashRate=0.02 functionTimeoutSeconds=2
  --stack NAME        the stack to deploy (default ${DEFAULT_STACK_NAME})
  --serve             deploy and wait (Ctrl-C stops): prints the environment for running
                      npm run experiment -- --target aws, or npm run redrive, from another terminal
  --log-dir DIR       the functions' logs, one file per function (default: not kept)
  -h, --help

The functions run on the Node their Runtime names (nodejs24.x: Node 24): this Node if it is 24,
else ASSEMBLY_NODE=/path/to/node, else Node 24 from the npm registry, fetched once.

Examples:
  npm run assembly
  npm run assembly -- -c modes=effectively-once -- --messages 100 --redrive
  npm run assembly -- --serve`;

/** Context the local run synthesizes with unless told otherwise: crashes, and quick redeliveries. */
const LOCAL_CONTEXT = { crashRate: '0.02', functionTimeoutSeconds: '2' } as const;

async function main(): Promise<number> {
  // The SDK's notice about its future Node 22 floor is known (this process may run on Node 20).
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const separator = process.argv.indexOf('--', 2);
  const own = separator === -1 ? process.argv.slice(2) : process.argv.slice(2, separator);
  const experimentArgs = separator === -1 ? [] : process.argv.slice(separator + 1);
  const { values } = parseArgs({
    args: own,
    options: {
      assembly: { type: 'string' },
      context: { type: 'string', short: 'c', multiple: true },
      stack: { type: 'string' },
      serve: { type: 'boolean' },
      'log-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const stackName = values.stack ?? DEFAULT_STACK_NAME;
  const status = (message: string) => process.stderr.write(`assembly: ${message}\n`);
  if (values.assembly !== undefined && values.context?.length) {
    throw new UsageError(
      '-c applies to the synth: with --assembly, synthesize with your context yourself (npx cdk synth -c …)',
    );
  }
  const context = { ...LOCAL_CONTEXT, ...parseContext(values.context ?? []) };
  const synthesized =
    values.assembly === undefined ? mkdtempSync(join(tmpdir(), 'delivery-semantics-assembly-')) : undefined;
  const removeSynthesized = () => {
    if (synthesized) rmSync(synthesized, { recursive: true, force: true });
  };
  let deployment: AssemblyDeployment;
  try {
    if (synthesized) {
      const flags = Object.entries(context).map(([key, value]) => `-c ${key}=${value}`);
      status(`synthesizing ${stackName} (npx cdk synth ${flags.join(' ')})`);
      await synthesizeAssembly(synthesized, { ...context, stackName });
    }
    deployment = await deployAssembly({
      assemblyDir: synthesized ?? (values.assembly as string),
      stackName,
      ...(values['log-dir'] ? { logDir: values['log-dir'] } : {}),
      onStatus: status,
      onDenial: (line) => process.stderr.write(`denied: ${line}\n`),
    });
  } catch (error) {
    removeSynthesized();
    throw error;
  }
  const stop = async () => {
    await deployment.stop();
    removeSynthesized();
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void stop().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143)));
  }
  const env = driverEnvironment(deployment);
  if (values.serve) {
    status(`deployed ${stackName} locally. From another terminal:`);
    const exports = Object.entries(env).map(([key, value]) => `export ${key}=${value}`);
    process.stdout.write(
      [
        `unset ${OVERRIDDEN.join(' ')}`,
        ...exports,
        `npm run experiment -- --target aws --stack ${stackName}`,
        `npm run redrive -- --stack ${stackName} --run <runId>`,
        '',
      ].join('\n'),
    );
    await new Promise(() => undefined);
  }
  try {
    const args = ['run', 'experiment', '--', '--target', 'aws', '--stack', stackName, ...experimentArgs];
    status(`running npm ${args.join(' ')} against it`);
    const code = await new Promise<number>((resolve) => {
      const child = spawn('npm', args, {
        cwd: PROJECT_ROOT,
        stdio: 'inherit',
        env: { ...withoutOverrides(process.env), ...env },
      });
      child.on('exit', (exitCode) => resolve(exitCode ?? 1));
    });
    const fatal = deployment.fatalError();
    if (fatal) status(`a function could not run: ${fatal.message}`);
    process.stdout.write(`${formatDenials(deployment)}\n`);
    return code !== 0 ? code : deployment.denials.length > 0 || fatal ? 1 : 0;
  } finally {
    await stop();
  }
}

/**
 * What in the user's environment would take the driver elsewhere: a profile (the SDK then skips
 * the environment's keys), a session token, or a service's own endpoint (it wins over
 * AWS_ENDPOINT_URL).
 */
const OVERRIDDEN = ['AWS_PROFILE', 'AWS_DEFAULT_PROFILE', 'AWS_SESSION_TOKEN'];

function withoutOverrides(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(env).filter(([key]) => !OVERRIDDEN.includes(key) && !key.startsWith('AWS_ENDPOINT_URL_')),
  );
}

/** The context keys the app reads: the settings' own (recorded as they are asked for) and the stack's name. */
function knownContextKeys(): string[] {
  const asked = new Set<string>(['stackName']);
  deploymentSettingsFromContext((key) => {
    asked.add(key);
    return undefined;
  });
  return [...asked].sort();
}

/** What the driver's SDK reads: the local endpoint for every service, the Region, the operator's keys. */
export function driverEnvironment(deployment: AssemblyDeployment): Record<string, string> {
  return {
    AWS_ENDPOINT_URL: deployment.endpoint,
    AWS_REGION: deployment.region,
    AWS_ACCESS_KEY_ID: deployment.operator.accessKeyId,
    AWS_SECRET_ACCESS_KEY: deployment.operator.secretAccessKey,
  };
}

function formatDenials(deployment: AssemblyDeployment): string {
  const counts = denialsByFunction(deployment);
  if (counts.length === 0)
    return "denials: 0 (every request was allowed by the template's IAM and the operator policy)";
  return ['denials:', ...counts.map(({ who, count }) => `  ${who}: ${count}`)].join('\n');
}

function parseContext(pairs: readonly string[]): Record<string, string> {
  const known = knownContextKeys();
  return Object.fromEntries(
    pairs.map((pair) => {
      const at = pair.indexOf('=');
      if (at <= 0) throw new UsageError(`-c ${pair}: context is KEY=VALUE (e.g. -c maxReceiveCount=3)`);
      const key = pair.slice(0, at);
      if (!known.includes(key)) {
        throw new UsageError(
          `-c ${key}: the stack reads no such context key (it reads ${known.join(', ')}; docs/deploying.md)`,
        );
      }
      return [key, pair.slice(at + 1)];
    }),
  );
}

class UsageError extends Error {}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(
      `error: ${message}\n${error instanceof UsageError || (error as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? '(npm run assembly -- --help)\n' : ''}`,
    );
    process.exit(1);
  },
);
