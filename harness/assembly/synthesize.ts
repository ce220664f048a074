import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../../lib/bundling.js';

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
      // The stack's region is fixed (CDK_DEFAULT_REGION) so ARNs in the template name it.
      env: { ...process.env, CDK_DEFAULT_REGION: process.env.CDK_DEFAULT_REGION ?? 'us-east-1' },
    });
  } catch (error) {
    const stderr = String((error as { stderr?: string }).stderr ?? '').trim();
    const refusal =
      stderr.split('\n').find((line) => line.startsWith('error: ')) ?? stderr.split('\n').slice(-3).join(' ');
    throw new Error(`cdk synth failed: ${refusal || (error as Error).message}`);
  }
}
