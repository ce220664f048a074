import { existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';

/**
 * A synthesized CDK cloud assembly (`cdk.out`), read as `cdk deploy` reads it: `manifest.json`
 * names the stacks (artifacts of type `aws:cloudformation:stack`, their template in
 * `properties.templateFile`) and each stack's asset manifest (a `cdk:asset-manifest` artifact it
 * depends on, `properties.file`), which maps a function's `Code.S3Key` to the folder it was
 * bundled into. Nothing is uploaded: the local runtime reads the asset folders in place.
 * https://docs.aws.amazon.com/cdk/v2/guide/deploy.html
 */

/** A CloudFormation template, as JSON. */
export interface Template {
  readonly AWSTemplateFormatVersion?: string;
  readonly Description?: string;
  readonly Parameters?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly Rules?: Readonly<Record<string, unknown>>;
  readonly Conditions?: Readonly<Record<string, unknown>>;
  readonly Resources: Readonly<Record<string, TemplateResource>>;
  readonly Outputs?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly [section: string]: unknown;
}

export interface TemplateResource {
  readonly Type: string;
  readonly Properties?: Readonly<Record<string, unknown>>;
  readonly [attribute: string]: unknown;
}

/** One stack of an assembly. */
export interface CloudAssembly {
  /** The assembly's folder, absolute. */
  readonly dir: string;
  readonly stackName: string;
  readonly template: Template;
  /**
   * The account the stack was synthesized for (the artifact's `environment`,
   * `aws://<account>/<region>`); undefined when environment-agnostic (`unknown-account`).
   */
  readonly account?: string;
  /**
   * The Region the stack was synthesized for; undefined when environment-agnostic
   * (`unknown-region`). A template synthesized for a Region names it in literal ARNs.
   */
  readonly region?: string;
  /** The absolute folder of the asset published at `s3Key` (a function's `Code.S3Key`). */
  assetFolderOfS3Key(s3Key: string): string;
}

/** An assembly that cannot be read: one line saying what to do. */
export class CloudAssemblyError extends Error {
  override readonly name = 'CloudAssemblyError';
}

interface Artifact {
  readonly type?: string;
  readonly environment?: string;
  readonly properties?: Readonly<Record<string, unknown>>;
  readonly dependencies?: readonly string[];
}

interface FileAsset {
  readonly source?: { readonly path?: string; readonly packaging?: string; readonly executable?: unknown };
  readonly destinations?: Readonly<Record<string, { readonly objectKey?: string }>>;
}

/**
 * Reads the stack `stackName` (its stack name or artifact id) of the assembly in `dir`; without a
 * name, the assembly's only stack.
 */
export function readCloudAssembly(dir: string, stackName?: string): CloudAssembly {
  const root = resolve(dir);
  const manifestFile = join(root, 'manifest.json');
  if (!existsSync(manifestFile)) {
    throw new CloudAssemblyError(
      `${dir} is not a cloud assembly (no manifest.json): run \`npx cdk synth\` first, or point --assembly at cdk.out`,
    );
  }
  const manifest = readJson(manifestFile) as { artifacts?: Record<string, Artifact> };
  const artifacts = manifest.artifacts ?? {};
  const stacks = Object.entries(artifacts)
    .filter(([, artifact]) => artifact.type === 'aws:cloudformation:stack')
    .map(([id, artifact]) => ({ id, artifact, name: String(artifact.properties?.stackName ?? id) }));
  const names = stacks.map((stack) => stack.name).join(', ');
  if (stacks.length === 0) throw new CloudAssemblyError(`${dir} has no stack (manifest.json lists none)`);
  const chosen =
    stackName === undefined
      ? stacks.length === 1
        ? stacks[0]
        : undefined
      : stacks.find((stack) => stack.name === stackName || stack.id === stackName);
  if (chosen === undefined) {
    throw new CloudAssemblyError(
      stackName === undefined
        ? `${dir} has several stacks (${names}): name one`
        : `${dir} has no stack ${stackName} (it has ${names})`,
    );
  }
  const templateFile = chosen.artifact.properties?.templateFile;
  if (typeof templateFile !== 'string') {
    throw new CloudAssemblyError(`${dir}: stack ${chosen.name} names no templateFile in manifest.json`);
  }
  const template = readJson(join(root, templateFile)) as Template;
  const assetManifestId = (chosen.artifact.dependencies ?? []).find(
    (id) => artifacts[id]?.type === 'cdk:asset-manifest',
  );
  const assetFile = assetManifestId && artifacts[assetManifestId]?.properties?.file;
  const files =
    typeof assetFile === 'string'
      ? ((readJson(join(root, assetFile)) as { files?: Record<string, FileAsset> }).files ?? {})
      : undefined;
  return {
    dir: root,
    stackName: chosen.name,
    template,
    ...environmentOf(chosen.artifact.environment),
    assetFolderOfS3Key: (s3Key) => assetFolder(root, chosen.name, files, s3Key),
  };
}

function assetFolder(
  root: string,
  stackName: string,
  files: Readonly<Record<string, FileAsset>> | undefined,
  s3Key: string,
): string {
  if (files === undefined)
    throw new CloudAssemblyError(`stack ${stackName} has no asset manifest in ${root}`);
  const [hash, asset] =
    Object.entries(files).find(([, file]) =>
      Object.values(file.destinations ?? {}).some((destination) => destination.objectKey === s3Key),
    ) ?? [];
  if (asset === undefined) {
    throw new CloudAssemblyError(`stack ${stackName}'s asset manifest publishes nothing at S3 key ${s3Key}`);
  }
  // A zip of a folder is what a function's code is; a single file or a command's output is not.
  const source = asset.source ?? {};
  if (source.packaging !== 'zip' || source.executable !== undefined || source.path === undefined) {
    const packaging = source.executable !== undefined ? "a command's output" : String(source.packaging);
    throw new CloudAssemblyError(
      `asset ${hash} (S3 key ${s3Key}) is packaged as ${packaging}: the local runtime runs a folder (zip of a directory) only`,
    );
  }
  const folder = isAbsolute(source.path) ? source.path : join(root, source.path);
  if (!existsSync(folder)) {
    throw new CloudAssemblyError(
      `asset folder ${folder} (S3 key ${s3Key}) is missing: run \`npx cdk synth\` again`,
    );
  }
  if (!statSync(folder).isDirectory()) {
    throw new CloudAssemblyError(
      `asset ${folder} (S3 key ${s3Key}) is a zip file, not a folder: the local runtime runs a folder`,
    );
  }
  return folder;
}

/** `aws://<account>/<region>`, with CDK's `unknown-account` / `unknown-region` as undefined. */
function environmentOf(environment: string | undefined): { account?: string; region?: string } {
  const match = /^aws:\/\/([^/]+)\/([^/]+)$/.exec(environment ?? '');
  const account = match?.[1];
  const region = match?.[2];
  return {
    ...(account !== undefined && account !== 'unknown-account' ? { account } : {}),
    ...(region !== undefined && region !== 'unknown-region' ? { region } : {}),
  };
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new CloudAssemblyError(
      `${file} cannot be read as JSON: ${(error as Error).message.split('\n')[0]}`,
    );
  }
}
