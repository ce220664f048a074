import { createWriteStream, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { bundleHandlers } from '../../local-aws/bundling/bundle.js';
import { LocalFunction } from '../../local-aws/lambda-runtime/local-function.js';
import type { Teardown } from '../teardown.js';
import type { CloudAssembly } from './cloud-assembly.js';
import type { DeployedFunction } from './control-plane.js';
import { LOCAL_ACCOUNT } from './locality.js';
import { nodeBinaryFor, nodeMajorOf } from './node-runtime.js';
import { assumedRoleArn, type Principals, rolePolicies } from './principals.js';
import type { ResolvedStack } from './resolve-stack.js';

/**
 * The stack's functions on the local Lambda service: each AWS::Lambda::Function's asset folder,
 * handler, timeout, memory and resolved environment, on the Node its Runtime names, with
 * credentials of its own that identify its code (and its role) to the gateway.
 */

export async function startFunctions(
  stack: ResolvedStack,
  principals: Principals,
  endpoint: string,
  region: string,
  assembly: CloudAssembly,
  logDir: string | undefined,
  teardown: Teardown,
  status: (message: string) => void,
): Promise<Map<string, DeployedFunction>> {
  // Only the worker that hosts a handler in its process: the handlers are the assembly's own bundles.
  const bundles = await bundleHandlers([]);
  teardown.add(() => bundles.dispose());
  const functions = new Map<string, DeployedFunction>();
  for (const resource of stack.byType('AWS::Lambda::Function')) {
    const p = resource.properties as unknown as FunctionProperties;
    const where = `Resources.${resource.logicalId}`;
    const nodePath = await nodeBinaryFor(nodeMajorOf(p.Runtime, where), status);
    const folder = assembly.assetFolderOfS3Key(p.Code.S3Key);
    const [file, exported] = splitHandler(p.Handler, folder, where);
    const roleName = roleNameOf(p.Role);
    const principal = {
      name: resource.physicalId,
      arn: assumedRoleArn(LOCAL_ACCOUNT, roleName, resource.physicalId),
      identityPolicies: rolePolicies(stack, roleName),
    };
    const credentials = principals.add({
      kind: 'function',
      name: resource.physicalId,
      principal,
      functionArn: resource.attributes.Arn as string,
    });
    const variables = p.Environment?.Variables ?? {};
    const local = new LocalFunction({
      name: resource.physicalId,
      bundlePath: file,
      workerPath: bundles.worker,
      nodePath,
      timeoutMs: (p.Timeout ?? 3) * 1000,
      memoryMb: p.MemorySize ?? 128,
      exportName: exported,
      // The locality rewrites (docs/deploying.md lists them): where AWS is, the Region, and the
      // role's credentials, which Lambda would put in these same variables.
      environment: {
        ...variables,
        AWS_REGION: region,
        AWS_DEFAULT_REGION: region,
        AWS_ENDPOINT_URL: endpoint,
        AWS_ACCESS_KEY_ID: credentials.accessKeyId,
        AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      },
      ...(logDir ? { logSink: logSink(logDir, resource.physicalId, teardown) } : {}),
    });
    teardown.add(() => local.stop());
    functions.set(resource.physicalId, {
      name: resource.physicalId,
      arn: resource.attributes.Arn as string,
      roleArn: p.Role,
      runtime: String(p.Runtime),
      handler: p.Handler,
      timeoutSeconds: p.Timeout ?? 3,
      memoryMb: p.MemorySize ?? 128,
      variables,
      local,
    });
  }
  return functions;
}

interface FunctionProperties {
  readonly Code: { readonly S3Key: string };
  readonly Handler: string;
  readonly Runtime: unknown;
  readonly Role: string;
  readonly Timeout?: number;
  readonly MemorySize?: number;
  readonly Environment?: { readonly Variables?: Record<string, string> };
}

/** `index.handler` → the folder's index.mjs (or .js, .cjs) and its export `handler`. */
function splitHandler(handler: string, folder: string, where: string): [string, string] {
  const dot = handler.lastIndexOf('.');
  const base = handler.slice(0, dot);
  const exported = handler.slice(dot + 1);
  const file = ['.mjs', '.js', '.cjs'].map((extension) => join(folder, base + extension)).find(existsSync);
  if (dot <= 0 || !file) throw new Error(`${where}: Handler ${handler} names no module in ${folder}`);
  return [file, exported];
}

/** `arn:aws:iam::<account>:role/<name>` → `<name>`. */
export function roleNameOf(roleArn: string): string {
  return roleArn.slice(roleArn.lastIndexOf('/') + 1);
}

function logSink(dir: string, name: string, teardown: Teardown) {
  mkdirSync(dir, { recursive: true });
  const stream = createWriteStream(join(dir, `${name}.log`));
  stream.on('error', () => undefined);
  teardown.add(() => new Promise((resolve) => stream.end(resolve)));
  return stream;
}
