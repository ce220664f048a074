import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../../../stack/bundling.js';

/**
 * `npx cdk synth` into `outdir`, with the given context: the assembly `cdk deploy` would upload,
 * made by the same CLI and app (cdk.json). A refused context value fails with the app's own
 * one-line message.
 */
export async function synthesizeAssembly(
  outdir: string,
  context: Readonly<Record<string, string>>,
): Promise<void> {
  const args = [
    'synth',
    '--quiet',
    '--output',
    outdir,
    ...Object.entries(context).flatMap(([key, value]) => ['-c', `${key}=${value}`]),
  ];
  try {
    await promisify(execFile)(join(PROJECT_ROOT, 'node_modules', '.bin', 'cdk'), args, {
      cwd: PROJECT_ROOT,
      maxBuffer: 16 * 1024 * 1024,
      env: withoutAwsAccount(process.env),
    });
  } catch (error) {
    const stderr = String((error as { stderr?: string }).stderr ?? '').trim();
    const refusal =
      stderr.split('\n').find((line) => line.startsWith('error: ')) ?? stderr.split('\n').slice(-3).join(' ');
    throw new Error(`cdk synth failed: ${refusal || (error as Error).message}`);
  }
}

/**
 * The CLI fills CDK_DEFAULT_ACCOUNT and CDK_DEFAULT_REGION from the user's AWS configuration (STS
 * for the account), and stack/app.ts puts them in the stack's `env`: an assembly for a real account,
 * which the local deployment (account 000000000000) cannot take. So the synth runs with no AWS
 * credentials or configuration, and the Region `us-east-1` (or CDK_DEFAULT_REGION if set).
 */
export function withoutAwsAccount(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const kept = Object.fromEntries(
    Object.entries(env).filter(
      ([key]) =>
        ![
          'AWS_PROFILE',
          'AWS_DEFAULT_PROFILE',
          'AWS_ACCESS_KEY_ID',
          'AWS_SECRET_ACCESS_KEY',
          'AWS_SESSION_TOKEN',
          'CDK_DEFAULT_ACCOUNT',
        ].includes(key),
    ),
  );
  return {
    ...kept,
    AWS_CONFIG_FILE: '/dev/null',
    AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
    AWS_EC2_METADATA_DISABLED: 'true',
    CDK_DEFAULT_REGION: env.CDK_DEFAULT_REGION ?? 'us-east-1',
  };
}
