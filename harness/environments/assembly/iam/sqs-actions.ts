import {
  type CallEnvironment,
  type OperationModel,
  requestOf,
  stringInput,
  UnknownResourceError,
  UnmodelledCallError,
} from './service-call.js';

/**
 * SQS's operations (JSON protocol names) as IAM authorizes them, on the queue's ARN: the Service
 * Authorization Reference, https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonsqs.html,
 * and the API's permissions table,
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-api-permissions-reference.html.
 * The batch operations have no action of their own: "setting permissions for SendMessage,
 * DeleteMessage, or ChangeMessageVisibility sets permissions for the corresponding batch versions"
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-batch-api-actions.html).
 */

type Input = Readonly<Record<string, unknown>>;

/**
 * A queue URL's ARN: the directory's, or the one AWS's URL shape gives
 * (`…/<account>/<name>` → `arn:aws:sqs:<region>:<account>:<name>`) for a queue it does not list.
 */
function queueArnOfUrl(input: Input, env: CallEnvironment): string {
  const url = stringInput(input, 'QueueUrl', 'queue');
  const known = env.directory.queueArnOfUrl(url);
  if (known) return known;
  const path = URL.canParse(url) ? new URL(url).pathname.split('/').filter(Boolean) : [];
  const [account, name] = path;
  if (path.length !== 2 || !account || !name || !/^\d{12}$/.test(account)) {
    throw new UnknownResourceError(`QueueUrl ${url} names no queue`);
  }
  return `arn:aws:sqs:${env.directory.region}:${account}:${name}`;
}

const onQueue =
  (action: string): OperationModel =>
  (input, env) => [requestOf(`sqs:${action}`, queueArnOfUrl(input, env), env)];

/** GetQueueUrl names the queue and, for another account's, its owner. */
const getQueueUrl: OperationModel = (input, env) => {
  const name = stringInput(input, 'QueueName', 'queue');
  const owner =
    typeof input.QueueOwnerAWSAccountId === 'string' ? input.QueueOwnerAWSAccountId : env.directory.account;
  const arn =
    (owner === env.directory.account ? env.directory.queueArnOfName(name) : undefined) ??
    `arn:aws:sqs:${env.directory.region}:${owner}:${name}`;
  return [requestOf('sqs:GetQueueUrl', arn, env)];
};

/**
 * A move task reads, deletes and inspects the dead-letter queue and sends to its destination with
 * the caller's permissions, so the caller needs those actions too, besides sqs:StartMessageMoveTask:
 * sqs:ReceiveMessage, sqs:DeleteMessage and sqs:GetQueueAttributes on the source (the DLQ) and
 * sqs:SendMessage on the destination, per the DLQ redrive guide's permissions section
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-configure-dead-letter-queue-redrive.html;
 * not in the copy of the page checked when this was written: docs/deploying.md states the same list).
 * Without DestinationArn the messages go back "to their respective original source queues"
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_StartMessageMoveTask.html):
 * every queue whose redrive policy names the DLQ. The implied requests carry the call's context.
 */
const startMessageMoveTask: OperationModel = (input, env) => {
  const source = stringInput(input, 'SourceArn', 'queue');
  const destinations =
    typeof input.DestinationArn === 'string'
      ? [input.DestinationArn]
      : env.directory.redriveSourcesOf(source);
  return [
    requestOf('sqs:StartMessageMoveTask', source, env),
    requestOf('sqs:ReceiveMessage', source, env),
    requestOf('sqs:DeleteMessage', source, env),
    requestOf('sqs:GetQueueAttributes', source, env),
    ...destinations.map((destination) => requestOf('sqs:SendMessage', destination, env)),
  ];
};

/** CancelMessageMoveTask is authorized on the task's source queue, which only its handle names. */
const cancelMessageMoveTask: OperationModel = (input, env) => {
  const handle = stringInput(input, 'TaskHandle', 'move task');
  if (!env.directory.moveTaskSourceOf) {
    throw new UnmodelledCallError(
      'sqs',
      'CancelMessageMoveTask',
      "the directory cannot tell a task handle's source queue",
    );
  }
  const source = env.directory.moveTaskSourceOf(handle);
  if (!source)
    throw new UnknownResourceError(`TaskHandle ${handle} names no move task this deployment started`);
  return [requestOf('sqs:CancelMessageMoveTask', source, env)];
};

/** The SQS operations the local deployment's callers use, by API operation name. */
export const SQS_OPERATIONS: ReadonlyMap<string, OperationModel> = new Map([
  ['SendMessage', onQueue('SendMessage')],
  ['SendMessageBatch', onQueue('SendMessage')],
  ['ReceiveMessage', onQueue('ReceiveMessage')],
  ['DeleteMessage', onQueue('DeleteMessage')],
  ['DeleteMessageBatch', onQueue('DeleteMessage')],
  ['ChangeMessageVisibility', onQueue('ChangeMessageVisibility')],
  ['ChangeMessageVisibilityBatch', onQueue('ChangeMessageVisibility')],
  ['GetQueueAttributes', onQueue('GetQueueAttributes')],
  ['SetQueueAttributes', onQueue('SetQueueAttributes')],
  ['PurgeQueue', onQueue('PurgeQueue')],
  ['GetQueueUrl', getQueueUrl],
  // ListQueues takes no resource: its only resource is '*'.
  ['ListQueues', (_input, env) => [requestOf('sqs:ListQueues', '*', env)]],
  ['StartMessageMoveTask', startMessageMoveTask],
  [
    'ListMessageMoveTasks',
    (input, env) => [requestOf('sqs:ListMessageMoveTasks', stringInput(input, 'SourceArn', 'queue'), env)],
  ],
  ['CancelMessageMoveTask', cancelMessageMoveTask],
]);
