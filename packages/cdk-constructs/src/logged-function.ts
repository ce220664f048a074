import { dirname } from 'node:path';
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { type BundlingOptions, NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { ESBUILD_INSTALL, missingLocalEsbuild } from './local-esbuild.js';

/** How the handler is bundled: NodejsFunction's own settings, passed through. */
export interface FunctionPackaging {
  /**
   * esbuild's options. `forceDockerBundling: true` is the one way to bundle in Docker: without it,
   * LoggedFunction refuses to synthesize when no local esbuild is found (never a silent fallback).
   * @default NodejsFunction's (this stack passes stack/nodejs-bundling.ts's: ESM for node24, minified, source maps)
   */
  readonly bundling?: BundlingOptions;
  /**
   * The folder with package.json and the lockfile.
   * @default NodejsFunction's: the folder of the lockfile found above the entry
   */
  readonly projectRoot?: string;
  /**
   * The lockfile (package-lock.json, pnpm-lock.yaml, yarn.lock or bun.lockb).
   * @default NodejsFunction's: the nearest one above the entry
   */
  readonly depsLockFilePath?: string;
}

export interface LoggedFunctionProps extends FunctionPackaging {
  /** The handler's source file, bundled with local esbuild (never Docker). */
  readonly entry: string;
  /**
   * The exported handler.
   * @default 'handler'
   */
  readonly handler?: string;
  /** @default Duration.seconds(30) */
  readonly timeout?: Duration;
  /** @default 256 */
  readonly memorySize?: number;
  /** @default {} */
  readonly environment?: Record<string, string>;
  /**
   * How long its log group keeps what the function logs.
   * @default logs.RetentionDays.ONE_WEEK
   */
  readonly logRetention?: logs.RetentionDays;
  /**
   * What happens to the log group when it leaves the stack (deleted, or replaced). Retained by
   * default, as CDK's own LogGroup does: what a function logged is what an incident is
   * investigated with, and a stack deleted or replaced by mistake should not take it along. A
   * retained group keeps its retention ({@link logRetention}), so its events still expire; the
   * empty group stays. A sandbox that `cdk destroy` should clean passes RemovalPolicy.DESTROY.
   * @default RemovalPolicy.RETAIN
   */
  readonly logGroupRemovalPolicy?: RemovalPolicy;
}

/**
 * A Node.js function as every function of this stack is deployed: bundled with local esbuild, on
 * a pinned runtime (nodejs24.x, arm64), with its own log group and a role that may write to that
 * log group only. AWSLambdaBasicExecutionRole, which CDK would attach otherwise, allows writing to
 * every log group of the account.
 *
 * The log group and the role are created beside the function, as `<id>Logs` and `<id>Role` in the
 * same scope, so that the function is a NodejsFunction itself (grants, event sources, metrics).
 *
 * Bundling is local, never Docker: without a local esbuild, NodejsFunction would silently switch to
 * Docker (and, with no Docker, fail on a `docker build` that says nothing of esbuild). So unless
 * `bundling.forceDockerBundling` asks for Docker, LoggedFunction looks for esbuild first, as
 * aws-cdk-lib does (`findLocalEsbuild`), and refuses to synthesize, naming it, if there is none.
 *
 * @example
 * const fn = new LoggedFunction(stack, 'Worker', {
 *   entry: new URL('../src/worker.ts', import.meta.url).pathname,
 *   environment: { TABLE_NAME: table.tableName },
 * });
 * table.grantReadData(fn);
 */
export class LoggedFunction extends NodejsFunction {
  public readonly functionLogGroup: logs.LogGroup;
  public readonly functionRole: iam.Role;

  constructor(scope: Construct, id: string, props: LoggedFunctionProps) {
    // Only where this stack is bundled: `cdk destroy`, `cdk ls` and stacks left out of a deploy
    // bundle nothing (the CLI's bundling-stacks context), so a teardown needs no esbuild.
    if (!props.bundling?.forceDockerBundling && Stack.of(scope).bundlingRequired) {
      // Where NodejsFunction bundles: projectRoot, else the lockfile's folder; without either, the
      // lockfile it finds is at or above the working directory, which resolution walks up through.
      const projectRoot =
        props.projectRoot ??
        (props.depsLockFilePath !== undefined ? dirname(props.depsLockFilePath) : process.cwd());
      const missing = missingLocalEsbuild({ projectRoot });
      if (missing !== undefined) {
        throw new Error(
          `LoggedFunction ${id}: ${missing}; install it (${ESBUILD_INSTALL}), or set ` +
            'bundling.forceDockerBundling to bundle in Docker',
        );
      }
    }
    const logGroup = new logs.LogGroup(scope, `${id}Logs`, {
      retention: props.logRetention ?? logs.RetentionDays.ONE_WEEK,
      removalPolicy: props.logGroupRemovalPolicy ?? RemovalPolicy.RETAIN,
    });
    const role = new iam.Role(scope, `${id}Role`, {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    });
    logGroup.grantWrite(role);
    super(scope, id, {
      entry: props.entry,
      handler: props.handler ?? 'handler',
      ...(props.projectRoot !== undefined ? { projectRoot: props.projectRoot } : {}),
      ...(props.depsLockFilePath !== undefined ? { depsLockFilePath: props.depsLockFilePath } : {}),
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      timeout: props.timeout ?? Duration.seconds(30),
      memorySize: props.memorySize ?? 256,
      ...(props.bundling !== undefined ? { bundling: props.bundling } : {}),
      logGroup,
      role,
      environment: props.environment ?? {},
    });
    this.functionLogGroup = logGroup;
    this.functionRole = role;
    Validations.of(this).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'The runtime is pinned on purpose (nodejs24.x, the current Node LTS Lambda offers, with the esbuild target node24 in stack/bundling.ts): it is upgraded deliberately, never implicitly.',
    });
  }
}
