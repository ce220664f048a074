import { randomUUID } from 'node:crypto';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { LocalFunction } from '../../local-aws/lambda-runtime/local-function.js';
import { redriveByCopy } from '../redrive.js';
import { type Answer, xml } from './gateway/gateway.js';
import type { ResolvedStack } from './resolve-stack.js';

/**
 * The calls of a deployment that no emulator serves, answered as AWS's APIs answer them (shapes the
 * SDK's clients parse): CloudFormation's DescribeStacks, Lambda's GetFunctionConfiguration and
 * Invoke, and SQS's message move task (fauxqs has none).
 */

/** A function of the deployment, as the local Lambda service runs it. */
export interface DeployedFunction {
  readonly name: string;
  readonly arn: string;
  readonly roleArn: string;
  readonly runtime: string;
  readonly handler: string;
  readonly timeoutSeconds: number;
  readonly memoryMb: number;
  /** The environment as the template resolves it (what GetFunctionConfiguration shows; no locality). */
  readonly variables: Readonly<Record<string, string>>;
  readonly local: LocalFunction;
}

/** DescribeStacks (the query protocol's XML): the stack and its resolved outputs. */
export function describeStacks(stack: ResolvedStack, input: Record<string, unknown>): Answer {
  const asked = input.StackName;
  if (asked !== undefined && asked !== stack.stackName && asked !== stack.stackArn) {
    return {
      status: 400,
      headers: { 'content-type': 'text/xml' },
      body: `<ErrorResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><Error><Type>Sender</Type><Code>ValidationError</Code><Message>Stack with id ${xml(String(asked))} does not exist</Message></Error><RequestId>local</RequestId></ErrorResponse>`,
    };
  }
  const outputs = Object.entries(stack.outputs)
    .map(
      ([key, value]) =>
        `<member><OutputKey>${xml(key)}</OutputKey><OutputValue>${xml(value)}</OutputValue></member>`,
    )
    .join('');
  return {
    status: 200,
    headers: { 'content-type': 'text/xml' },
    body:
      '<DescribeStacksResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><DescribeStacksResult><Stacks><member>' +
      `<StackName>${xml(stack.stackName)}</StackName><StackId>${xml(stack.stackArn)}</StackId>` +
      `<StackStatus>CREATE_COMPLETE</StackStatus><CreationTime>${new Date().toISOString()}</CreationTime>` +
      `<Outputs>${outputs}</Outputs></member></Stacks></DescribeStacksResult>` +
      '<ResponseMetadata><RequestId>local</RequestId></ResponseMetadata></DescribeStacksResponse>',
  };
}

export function functionConfiguration(fn: DeployedFunction): Answer {
  return json(200, {
    FunctionName: fn.name,
    FunctionArn: fn.arn,
    Runtime: fn.runtime,
    Role: fn.roleArn,
    Handler: fn.handler,
    Timeout: fn.timeoutSeconds,
    MemorySize: fn.memoryMb,
    Environment: { Variables: fn.variables },
    State: 'Active',
    LastUpdateStatus: 'Successful',
  });
}

/**
 * A synchronous Invoke: the function's answer as the body; a failed invocation is 200 with
 * `X-Amz-Function-Error: Unhandled` and Lambda's error object, as the Invoke API documents. With
 * `LogType: Tail` the last log lines carry the REPORT line (its "Max Memory Used").
 */
export async function invoke(fn: DeployedFunction, payload: Buffer, tail: boolean): Promise<Answer> {
  const event = payload.length > 0 ? JSON.parse(payload.toString('utf8')) : {};
  const result = await fn.local.invoke(event);
  const report =
    result.status === 'ok'
      ? `REPORT RequestId: local Memory Size: ${fn.memoryMb} MB Max Memory Used: ${Math.ceil(result.maxRssKb / 1024)} MB\n`
      : 'REPORT RequestId: local\n';
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-amz-executed-version': '$LATEST',
    ...(tail ? { 'x-amz-log-result': Buffer.from(report).toString('base64') } : {}),
  };
  if (result.status === 'ok') {
    return {
      status: 200,
      headers,
      body: result.response === undefined ? 'null' : JSON.stringify(result.response),
    };
  }
  return {
    status: 200,
    headers: { ...headers, 'x-amz-function-error': 'Unhandled' },
    body: JSON.stringify({ errorType: result.errorType, errorMessage: result.message }),
  };
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Answer {
  return {
    status,
    headers: { 'content-type': 'application/x-amz-json-1.0', ...headers },
    body: JSON.stringify(body),
  };
}

interface MoveTask {
  readonly handle: string;
  readonly sourceArn: string;
  readonly destinationArn: string;
  readonly started: number;
  status: 'RUNNING' | 'COMPLETED' | 'FAILED';
  moved: number;
  failureReason?: string;
}

/**
 * SQS's message move task: the DLQ's messages back to the queue whose redrive policy names it (or
 * to DestinationArn), by the lab's copy (harness/environments/redrive.ts). Who may start one is
 * decided before it gets here (the operator's StartMessageMoveTask and the receive, delete and
 * send it implies); the copy itself runs as SQS, with the deployer's client.
 */
export class MoveTasks {
  private readonly tasks: MoveTask[] = [];

  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrlOfArn: (arn: string) => string | undefined,
    private readonly redriveSourceOf: (deadLetterQueueArn: string) => string | undefined,
  ) {}

  start(input: Record<string, unknown>): Answer {
    const sourceArn = String(input.SourceArn ?? '');
    const destinationArn = input.DestinationArn
      ? String(input.DestinationArn)
      : this.redriveSourceOf(sourceArn);
    const sourceUrl = this.queueUrlOfArn(sourceArn);
    const destinationUrl = destinationArn ? this.queueUrlOfArn(destinationArn) : undefined;
    if (!sourceUrl || !destinationArn || !destinationUrl) {
      return json(400, {
        __type: 'com.amazonaws.sqs#ResourceNotFoundException',
        message: `${sourceArn} is not a dead-letter queue of this deployment`,
      });
    }
    if (this.tasks.some((task) => task.sourceArn === sourceArn && task.status === 'RUNNING')) {
      return json(400, {
        __type: 'com.amazonaws.sqs#UnsupportedOperation',
        message: `a message move task is already running on ${sourceArn}`,
      });
    }
    const task: MoveTask = {
      handle: randomUUID(),
      sourceArn,
      destinationArn,
      started: Date.now(),
      status: 'RUNNING',
      moved: 0,
    };
    this.tasks.unshift(task);
    void redriveByCopy(this.sqs, sourceUrl, destinationUrl).then(
      (moved) => {
        task.moved = moved;
        task.status = 'COMPLETED';
      },
      (error: unknown) => {
        task.status = 'FAILED';
        task.failureReason = (error as Error).message;
      },
    );
    return json(200, { TaskHandle: task.handle });
  }

  /** The source's tasks, most recent first; only a running one shows its handle, as SQS lists them. */
  list(input: Record<string, unknown>): Answer {
    const results = this.tasks
      .filter((task) => task.sourceArn === input.SourceArn)
      .slice(0, Number(input.MaxResults ?? 1))
      .map((task) => ({
        ...(task.status === 'RUNNING' ? { TaskHandle: task.handle } : {}),
        Status: task.status,
        SourceArn: task.sourceArn,
        DestinationArn: task.destinationArn,
        ApproximateNumberOfMessagesMoved: task.moved,
        StartedTimestamp: task.started,
        ...(task.failureReason ? { FailureReason: task.failureReason } : {}),
      }));
    return json(200, { Results: results });
  }
}
