import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { type BundlingOptions, NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';

/** How the handler is bundled: NodejsFunction's own settings, passed through. */
export interface FunctionPackaging {
  /**
   * esbuild's options.
   * @default NodejsFunction's (this stack passes lib/nodejs-bundling.ts's: ESM for node24, minified, source maps)
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
}

/**
 * A Node.js function as every function of this stack is deployed: bundled with local esbuild, on
 * a pinned runtime (nodejs24.x, arm64), with its own log group and a role that may write to that
 * log group only. AWSLambdaBasicExecutionRole, which CDK would attach otherwise, allows writing to
 * every log group of the account.
 *
 * The log group and the role are created beside the function, as `<id>Logs` and `<id>Role` in the
 * same scope, so that the function is a NodejsFunction itself (grants, event sources, metrics).
 */
export class LoggedFunction extends NodejsFunction {
  public readonly functionLogGroup: logs.LogGroup;
  public readonly functionRole: iam.Role;

  constructor(scope: Construct, id: string, props: LoggedFunctionProps) {
    const logGroup = new logs.LogGroup(scope, `${id}Logs`, {
      retention: props.logRetention ?? logs.RetentionDays.ONE_WEEK,
      removalPolicy: RemovalPolicy.DESTROY,
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
        'The runtime is pinned on purpose (nodejs24.x, the current Node LTS Lambda offers, with the esbuild target node24 in lib/bundling.ts): it is upgraded deliberately, never implicitly.',
    });
  }
}
