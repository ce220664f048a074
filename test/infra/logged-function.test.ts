import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  findLocalEsbuild,
  LoggedFunction,
  type LoggedFunctionProps,
} from '@sqs-delivery-semantics/cdk-constructs';
import { App, DockerImage, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { handlerEntry, PROJECT_ROOT } from '../../stack/bundling.js';
import { LAB_PACKAGING } from '../../stack/nodejs-bundling.js';

/** One function alone in a stack, bundling skipped (test/infra/synth.test.ts bundles for real). */
function functionIn(
  props: Partial<LoggedFunctionProps> = {},
  app = new App({ context: { 'aws:cdk:bundling-stacks': [] } }),
) {
  const stack = new Stack(app, 'Function');
  const fn = new LoggedFunction(stack, 'Worker', { entry: handlerEntry('verifier'), ...props });
  return { stack, fn, template: Template.fromStack(stack) };
}

describe('LoggedFunction (packages/cdk-constructs/src/logged-function.ts)', () => {
  it('pins nodejs24.x on arm64, with the documented defaults', () => {
    functionIn().template.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      Timeout: 30,
      MemorySize: 256,
    });
    functionIn({ timeout: Duration.seconds(90), memorySize: 1024 }).template.hasResourceProperties(
      'AWS::Lambda::Function',
      { Timeout: 90, MemorySize: 1024 },
    );
  });

  it('logs to its own log group, kept a week, which its role alone may write to', () => {
    const { template, stack, fn } = functionIn();
    template.resourceCountIs('AWS::Logs::LogGroup', 1);
    template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 7 });
    const logGroup = stack.getLogicalId(fn.functionLogGroup.node.defaultChild as never);
    template.hasResourceProperties('AWS::Lambda::Function', {
      LoggingConfig: { LogGroup: { Ref: logGroup } },
    });
    // No AWSLambdaBasicExecutionRole: it would allow writing to every log group of the account.
    template.hasResourceProperties('AWS::IAM::Role', { ManagedPolicyArns: Match.absent() });
    const statements = Object.values(template.findResources('AWS::IAM::Policy')).flatMap(
      (policy) =>
        policy.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[],
    );
    expect(statements).toHaveLength(1);
    expect([statements[0]?.Action].flat().every((action) => action?.startsWith('logs:'))).toBe(true);
    expect(statements[0]?.Resource).toEqual({ 'Fn::GetAtt': [logGroup, 'Arn'] });
  });

  it('retains its log group by default, as CDK’s LogGroup does, and deletes it when given DESTROY', () => {
    const policiesOf = (props: Partial<LoggedFunctionProps>) => {
      const { template, stack, fn } = functionIn(props);
      const resource =
        template.toJSON().Resources[stack.getLogicalId(fn.functionLogGroup.node.defaultChild as never)];
      return [resource?.DeletionPolicy, resource?.UpdateReplacePolicy];
    };
    expect(policiesOf({})).toEqual(['Retain', 'Retain']);
    expect(policiesOf({ logGroupRemovalPolicy: RemovalPolicy.DESTROY })).toEqual(['Delete', 'Delete']);
  });

  it('creates its log group and role beside itself, as <id>Logs and <id>Role', () => {
    const { stack, fn } = functionIn();
    expect(fn.functionLogGroup.node.scope).toBe(stack);
    expect(fn.functionLogGroup.node.id).toBe('WorkerLogs');
    expect(fn.functionRole.node.id).toBe('WorkerRole');
    expect(fn.role).toBe(fn.functionRole);
  });

  // nodejs24.x is the newest Node runtime aws-cdk-lib 2.276.0 knows, so AwsSolutions-L1 passes
  // today; the construct acknowledges it for the day a newer one appears and the pin stays.
  it("passes cdk-nag's AWS Solutions rules alone in a stack", () => {
    const app = new App({
      context: { 'aws:cdk:bundling-stacks': [] },
      outdir: mkdtempSync(join(tmpdir(), 'nag-fn-')),
    });
    functionIn({}, app);
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    expect(() => app.synth()).not.toThrow();
  });

  it("takes its packaging from the caller: the lab's is this project's esbuild options, root and lockfile", () => {
    expect(LAB_PACKAGING.bundling?.target).toBe('node24');
    expect(LAB_PACKAGING.depsLockFilePath).toMatch(/\/package-lock\.json$/);
    expect(() => functionIn(LAB_PACKAGING)).not.toThrow();
  });
});

describe('LoggedFunction: local esbuild, never a silent Docker fallback', () => {
  /** A project of its own outside the repository: a handler and a lockfile, no node_modules. */
  const project = mkdtempSync(join(tmpdir(), 'no-esbuild-'));
  writeFileSync(join(project, 'handler.ts'), 'export const handler = async () => undefined;\n');
  writeFileSync(join(project, 'package-lock.json'), '{"lockfileVersion": 3, "packages": {}}\n');
  /** An empty folder for PATH: no `esbuild` executable on it. */
  const emptyPath = mkdtempSync(join(tmpdir(), 'empty-path-'));
  const inProject: Partial<LoggedFunctionProps> = {
    entry: join(project, 'handler.ts'),
    projectRoot: project,
    depsLockFilePath: join(project, 'package-lock.json'),
  };

  afterEach(() => vi.unstubAllEnvs());
  afterAll(() => {
    rmSync(project, { recursive: true, force: true });
    rmSync(emptyPath, { recursive: true, force: true });
  });

  it('refuses to synthesize without a local esbuild, naming esbuild, the project root and the fixes', () => {
    // Not vacuous: from that folder and that PATH, there is no esbuild to find.
    expect(findLocalEsbuild(project, { searchPath: emptyPath })).toBeUndefined();
    vi.stubEnv('PATH', emptyPath);
    // An app that bundles this stack (cdk synth, deploy, diff: the CLI's default).
    expect(() => functionIn(inProject, new App())).toThrow(
      `LoggedFunction Worker: no local esbuild found from ${project}; install it ` +
        '(npm install --save-dev esbuild@0.28.2), or set bundling.forceDockerBundling to bundle in Docker',
    );
  });

  it('needs no esbuild where the stack is not bundled (cdk destroy, cdk ls, a stack left out of a deploy)', () => {
    vi.stubEnv('PATH', emptyPath);
    // The CLI's context for those: no stack is bundled, so CDK would never fall back to Docker.
    expect(() =>
      functionIn(inProject, new App({ context: { 'aws:cdk:bundling-stacks': [] } })),
    ).not.toThrow();
  });

  it('lets a team that asks for Docker (forceDockerBundling) have it: no refusal', () => {
    vi.stubEnv('PATH', emptyPath);
    // An image from a registry, so that nothing runs `docker build` (bundling is skipped here).
    const dockerImage = DockerImage.fromRegistry('public.ecr.aws/sam/build-nodejs24.x');
    expect(() =>
      functionIn({ ...inProject, bundling: { forceDockerBundling: true, dockerImage } }),
    ).not.toThrow();
  });

  it('with esbuild present, bundles for real: the handler is built locally into the asset', () => {
    expect(findLocalEsbuild(PROJECT_ROOT)).toEqual({ version: '0.28.2', source: 'package' });
    const outdir = mkdtempSync(join(tmpdir(), 'bundled-fn-'));
    try {
      // The asset's path in the template's metadata, as the CLI asks for it.
      const app = new App({ outdir, context: { 'aws:cdk:enable-asset-metadata': true } });
      const { stack, fn } = functionIn({ ...LAB_PACKAGING, entry: handlerEntry('verifier') }, app);
      const assembly = app.synth();
      const code =
        Template.fromStack(stack).toJSON().Resources[stack.getLogicalId(fn.node.defaultChild as never)]
          ?.Metadata?.['aws:asset:path'];
      expect(code).toMatch(/^asset\./);
      expect(existsSync(join(assembly.directory, code, 'index.mjs'))).toBe(true);
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  }, 60_000);
});
