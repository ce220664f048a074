import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type DeploymentSettings,
  deploymentSettingsFromContext,
  InvalidSettingError,
} from '../../contract/deployment-settings.js';
import { partitionKey } from '../../contract/ledger-keys.js';
import {
  DEFAULT_RETENTION,
  QUEUE_RETENTION_SECONDS,
  retentionRuleViolations,
} from '../../contract/retention.js';
import { modeOutputs, STACK_OUTPUTS } from '../../contract/stack-outputs.js';
import {
  FIFO_MAX_BATCH_SIZE,
  isFifoMode,
  MODE_NAMES,
  MODES,
  type Mode,
  STORAGE,
  settingsOf,
} from '../../contract/topology.js';
import { BUNDLING } from '../../stack/bundling.js';
import { DeliverySemanticsStack, IDEMPOTENCY_RECORD_ACTIONS } from '../../stack/delivery-semantics-stack.js';

/** Every mode and the outbox relay (`-c modes=all`), unless the test says otherwise. */
const EVERYTHING: DeploymentSettings = {
  crashRate: 0,
  crashSeed: 'seed',
  modes: MODE_NAMES,
  outboxRelay: true,
};

function synth(settings: DeploymentSettings = EVERYTHING): {
  template: Template;
  stack: DeliverySemanticsStack;
} {
  // Skipping bundling keeps these assertions fast; test/infra/synth.test.ts bundles for real.
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new DeliverySemanticsStack(app, 'Test', { settings });
  return { template: Template.fromStack(stack), stack };
}

/** The properties of the one event source mapping that invokes the mode's consumer. */
function mappingOf(template: Template, stack: DeliverySemanticsStack, mode: Mode): Record<string, unknown> {
  const consumer = stack.getLogicalId(stack.resourcesOf(mode).consumer.node.defaultChild as never);
  const mappings = Object.values(
    template.findResources('AWS::Lambda::EventSourceMapping', {
      Properties: { FunctionName: { Ref: consumer } },
    }),
  );
  expect(mappings, mode).toHaveLength(1);
  return mappings[0]?.Properties;
}

describe('DeliverySemanticsStack', () => {
  let template: Template;
  let stack: DeliverySemanticsStack;

  beforeAll(() => {
    ({ template, stack } = synth());
  });

  it('deploys a queue and a DLQ per mode, a function per mode, the verifier, the payment provider and the outbox relay', () => {
    expect(MODE_NAMES.length).toBeGreaterThanOrEqual(4);
    // Every mode's pair, and the relay's on-failure queue.
    template.resourceCountIs('AWS::SQS::Queue', 2 * MODE_NAMES.length + 1);
    template.resourceCountIs('AWS::Lambda::Function', MODE_NAMES.length + 3);
    // Every mode's queue, and the outbox table's stream.
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', MODE_NAMES.length + 1);
    template.resourceCountIs('AWS::Lambda::Url', 1);
    // The ledger, Powertools' idempotency records, the provider's table, the outbox and the producer's state.
    template.resourceCountIs('AWS::DynamoDB::Table', 5);
  });

  it.each(MODE_NAMES)(
    '%s: queue has a redrive policy to its DLQ, SSE-SQS, and visibility ≥ 6 × timeout',
    (mode) => {
      const settings = MODES[mode];
      const { queue, deadLetterQueue } = stack.resourcesOf(mode);
      template.hasResourceProperties('AWS::SQS::Queue', {
        VisibilityTimeout: settings.visibilityTimeoutSeconds,
        SqsManagedSseEnabled: true,
        MessageRetentionPeriod: QUEUE_RETENTION_SECONDS,
        MaximumMessageSize: STORAGE.maxMessageBytes,
        RedrivePolicy: {
          deadLetterTargetArn: {
            'Fn::GetAtt': [stack.getLogicalId(deadLetterQueue.node.defaultChild as never), 'Arn'],
          },
          maxReceiveCount: settings.maxReceiveCount,
        },
      });
      expect(settings.visibilityTimeoutSeconds).toBeGreaterThanOrEqual(6 * settings.functionTimeoutSeconds);
      expect(queue.node.id).toMatch(/Queue$/);
    },
  );

  it('sets the message size limit explicitly on every queue, DLQs included', () => {
    const queues = Object.values(template.findResources('AWS::SQS::Queue'));
    expect(queues).toHaveLength(2 * MODE_NAMES.length + 1);
    for (const queue of queues) expect(queue.Properties.MaximumMessageSize).toBe(STORAGE.maxMessageBytes);
  });

  it('enforces TLS on every queue', () => {
    const policies = template.findResources('AWS::SQS::QueuePolicy');
    expect(Object.keys(policies)).toHaveLength(2 * MODE_NAMES.length + 1);
    for (const policy of Object.values(policies)) {
      expect(policy.Properties.PolicyDocument.Statement).toContainEqual(
        expect.objectContaining({
          Effect: 'Deny',
          Action: 'sqs:*',
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
      );
    }
  });

  it.each(MODE_NAMES)(
    '%s: event source mapping uses the topology’s batch, concurrency and response types',
    (mode) => {
      const settings = MODES[mode];
      template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        FunctionName: {
          Ref: stack.getLogicalId(stack.resourcesOf(mode).consumer.node.defaultChild as never),
        },
        BatchSize: settings.batchSize,
        ScalingConfig: { MaximumConcurrency: settings.maxConcurrency },
        FunctionResponseTypes: settings.reportBatchItemFailures
          ? ['ReportBatchItemFailures']
          : Match.absent(),
      });
    },
  );

  it('reports batch item failures for the work-first modes only', () => {
    expect(MODES['at-least-once'].reportBatchItemFailures).toBe(true);
    expect(MODES['effectively-once'].reportBatchItemFailures).toBe(true);
    expect(MODES['powertools-idempotency'].reportBatchItemFailures).toBe(true);
    expect(MODES['at-most-once'].reportBatchItemFailures).toBe(false);
  });

  it('bundles for the Node of the runtime it pins (nodejs24.x, esbuild target node24)', () => {
    expect(BUNDLING.target).toBe('node24');
    const runtimes = Object.values(template.findResources('AWS::Lambda::Function')).map(
      (fn) => (fn as { Properties: { Runtime?: string } }).Properties.Runtime,
    );
    expect(new Set(runtimes)).toEqual(new Set(['nodejs24.x']));
  });

  it.each(MODE_NAMES)(
    '%s: consumer runs a pinned Node runtime with timeout, memory and env from the topology',
    (mode) => {
      const settings = MODES[mode];
      const consumer = stack.getLogicalId(stack.resourcesOf(mode).consumer.node.defaultChild as never);
      const ownQueue = stack.getLogicalId(stack.resourcesOf(mode).queue.node.defaultChild as never);
      // This mode's own function, not any function that matches.
      expect(template.toJSON().Resources[consumer]?.Properties).toMatchObject({
        Runtime: 'nodejs24.x',
        Timeout: settings.functionTimeoutSeconds,
        MemorySize: settings.memoryMb,
        Environment: {
          Variables: {
            CRASH_RATE: '0',
            CRASH_SEED: 'seed',
            CRASH_AT: 'none',
            // 30 days by default, and the age guard on in every deployed consumer.
            MARKER_TTL_SECONDS: String(30 * 24 * 3600),
            AGE_GUARD: 'on',
          },
        },
      });
      const variables = template.toJSON().Resources[consumer]?.Properties.Environment.Variables;
      // Only the modes that act on their own queue know its URL: at-most-once deletes its batch, a
      // FIFO mode releases a blocked group's records.
      const needsQueue = settings.deletesOwnBatch || isFifoMode(mode);
      expect(variables.QUEUE_URL).toEqual(needsQueue ? { Ref: ownQueue } : undefined);
      expect(variables.TABLE_NAME).toEqual({ Ref: expect.stringMatching(/^Ledger/) });
      expect(variables.IDEMPOTENCY_TABLE_NAME).toEqual(
        settingsOf(mode).idempotencyTable ? { Ref: expect.stringMatching(/^IdempotencyRecords/) } : undefined,
      );
    },
  );

  it('lets the FIFO consumer change the visibility of its own queue’s messages, and denies it nothing it needs', () => {
    const consumer = stack.getLogicalId(
      stack.resourcesOf('fifo-versioned').consumer.node.defaultChild as never,
    );
    const queue = stack.getLogicalId(stack.resourcesOf('fifo-versioned').queue.node.defaultChild as never);
    const statements = statementsOf(consumer);
    const allows = statements.filter(
      (statement) =>
        statement.Effect === 'Allow' && actionsOf(statement).includes('sqs:ChangeMessageVisibility'),
    );
    expect(JSON.stringify(allows.map((statement) => statement.Resource))).toContain(queue);
    const denies = statements.filter((statement) => statement.Effect === 'Deny');
    expect(denies.flatMap(actionsOf)).not.toContain('sqs:ChangeMessageVisibility');
  });

  it('stores the ledger on demand, with point-in-time recovery and a TTL', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
    });
    // The deployed retention keeps the rule: markers outlive every event the age guard accepts.
    expect(retentionRuleViolations(DEFAULT_RETENTION)).toEqual([]);
  });

  it('keeps Powertools’ idempotency records in their own table: key `id`, TTL `expiration`, on demand, PITR, destroyed with the stack', () => {
    const table = stack.idempotencyTable;
    if (!table)
      throw new Error('the topology has a mode with idempotencyTable, so the stack must create the table');
    const resource = template.toJSON().Resources[stack.getLogicalId(table.node.defaultChild as never)];
    expect(resource).toMatchObject({
      Type: 'AWS::DynamoDB::Table',
      DeletionPolicy: 'Delete',
      UpdateReplacePolicy: 'Delete',
      Properties: {
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        TimeToLiveSpecification: { AttributeName: 'expiration', Enabled: true },
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
      },
    });
  });

  it('deletes every queue and log group with the stack (a sandbox for cdk destroy), though SqsConsumer and LoggedFunction retain by default', () => {
    const resources = Object.entries(template.toJSON().Resources as Record<string, Record<string, unknown>>);
    const kept = (type: string) =>
      resources
        .filter(([, resource]) => resource.Type === type)
        .map(([id, resource]) => [id, resource.DeletionPolicy, resource.UpdateReplacePolicy]);
    const queues = kept('AWS::SQS::Queue');
    // Every mode's pair, and the relay's on-failure queue; every mode's consumer, the verifier, the provider, the relay.
    expect(queues).toHaveLength(2 * MODE_NAMES.length + 1);
    const logGroups = kept('AWS::Logs::LogGroup');
    expect(logGroups).toHaveLength(MODE_NAMES.length + 3);
    for (const [id, deletion, replace] of [...queues, ...logGroups]) {
      expect([id, deletion, replace]).toEqual([id, 'Delete', 'Delete']);
    }
  });

  /** The statements of the identity policy attached to a function's role. */
  function statementsOf(functionLogicalId: string): Array<Record<string, unknown>> {
    const fn = template.findResources('AWS::Lambda::Function')[functionLogicalId];
    const roleRef = fn?.Properties.Role['Fn::GetAtt'][0];
    const policies = Object.values(template.findResources('AWS::IAM::Policy')).filter((policy) =>
      policy.Properties.Roles.some((role: { Ref: string }) => role.Ref === roleRef),
    );
    return policies.flatMap((policy) => policy.Properties.PolicyDocument.Statement);
  }

  /** What a consumer may do in its own partition: write, and read where its handler reads (credit-then-marker's marker). */
  const ledgerActions = (mode: Mode): string[] =>
    settingsOf(mode).readsOwnPartition
      ? ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']
      : ['dynamodb:PutItem', 'dynamodb:UpdateItem'];

  const actionsOf = (statement: Record<string, unknown>): string[] =>
    ([] as string[]).concat(statement.Action as string | string[]);

  it('lets only at-most-once delete from its own code: the others deny sqs:DeleteMessage to function code', () => {
    for (const mode of MODE_NAMES) {
      const statements = statementsOf(
        stack.getLogicalId(stack.resourcesOf(mode).consumer.node.defaultChild as never),
      );
      const deny = statements.find((statement) => statement.Effect === 'Deny');
      if (MODES[mode].deletesOwnBatch) {
        expect(deny).toBeUndefined();
      } else {
        // Exactly this account's functions in this region and partition: a wrong pattern would
        // silently deny nothing.
        expect(deny).toEqual({
          Sid: 'OnlyTheEventSourceMappingDeletes',
          Effect: 'Deny',
          Action: 'sqs:DeleteMessage',
          Resource: {
            'Fn::GetAtt': [
              stack.getLogicalId(stack.resourcesOf(mode).queue.node.defaultChild as never),
              'Arn',
            ],
          },
          Condition: {
            ArnLike: {
              'lambda:SourceFunctionArn': {
                'Fn::Join': [
                  '',
                  [
                    'arn:',
                    { Ref: 'AWS::Partition' },
                    ':lambda:',
                    { Ref: 'AWS::Region' },
                    ':',
                    { Ref: 'AWS::AccountId' },
                    ':function:*',
                  ],
                ],
              },
            },
          },
        });
      }
      const dynamoActions = statements
        .filter((statement) => !onIdempotencyTable(statement))
        .flatMap(actionsOf)
        .filter((action) => action.startsWith('dynamodb:'));
      expect(dynamoActions.sort()).toEqual(ledgerActions(mode));
    }
  });

  /** IAM `StringLike`: `*` matches any sequence of characters (`#` included), `?` exactly one; case-sensitive. */
  const stringLike = (pattern: string, value: string): boolean =>
    new RegExp(
      `^${pattern
        .split('')
        .map((char) =>
          char === '*' ? '[\\s\\S]*' : char === '?' ? '[\\s\\S]' : char.replace(/[\\^$.|+()[\]{}]/g, '\\$&'),
        )
        .join('')}$`,
    ).test(value);

  const DYNAMODB_READS = new Set([
    'dynamodb:BatchGetItem',
    'dynamodb:DescribeTable',
    'dynamodb:GetItem',
    'dynamodb:Query',
    'dynamodb:Scan',
    // The outbox relay reads its table's stream (test/infra/outbox-relay.test.ts).
    'dynamodb:ListStreams',
    'dynamodb:DescribeStream',
    'dynamodb:GetRecords',
    'dynamodb:GetShardIterator',
  ]);
  /** Any DynamoDB action that is not a known read, or a wildcard that could cover a write. */
  const isDynamoWrite = (action: string): boolean =>
    action === '*' || (action.startsWith('dynamodb:') && !DYNAMODB_READS.has(action));

  /** Every Allow statement of every identity policy in the template, with the roles it is attached to. */
  function allowStatements(): Array<{ roles: string[]; statement: Record<string, unknown> }> {
    return Object.values(template.findResources('AWS::IAM::Policy')).flatMap((policy) =>
      (policy.Properties.PolicyDocument.Statement as Array<Record<string, unknown>>)
        .filter((statement) => statement.Effect === 'Allow')
        .map((statement) => ({
          roles: policy.Properties.Roles.map((role: { Ref: string }) => role.Ref),
          statement,
        })),
    );
  }

  const consumerId = (mode: Mode): string =>
    stack.getLogicalId(stack.resourcesOf(mode).consumer.node.defaultChild as never);
  const tableArn = () => ({
    'Fn::GetAtt': [stack.getLogicalId(stack.table.node.defaultChild as never), 'Arn'],
  });
  const idempotencyTableArn = () => {
    const table = stack.idempotencyTable;
    if (!table) throw new Error('no idempotency table in the stack');
    return { 'Fn::GetAtt': [stack.getLogicalId(table.node.defaultChild as never), 'Arn'] };
  };
  /** A statement on Powertools' idempotency table and on nothing else (the ledger never matches). */
  const onIdempotencyTable = (statement: Record<string, unknown>): boolean =>
    JSON.stringify(statement.Resource) === JSON.stringify(idempotencyTableArn());
  /** The stand-in provider writes its own table (another company's, in real life): test/infra/payment-provider.test.ts. */
  const onProviderTable = (statement: Record<string, unknown>): boolean => {
    const table = stack.getLogicalId(stack.paymentProvider?.table.node.defaultChild as never);
    return JSON.stringify(statement.Resource).includes(`"${table}"`);
  };

  it('checks StringLike the way IAM evaluates it (the helper the partition tests rely on)', () => {
    expect(stringLike('RUN#*#MODE#m', 'RUN#a#b#MODE#m')).toBe(true);
    expect(stringLike('RUN#*#MODE#m', 'RUN##MODE#m')).toBe(true);
    expect(stringLike('RUN#*#MODE#m', 'RUN#a#MODE#m2')).toBe(false);
    expect(stringLike('RUN#*#MODE#m', 'run#a#MODE#m')).toBe(false);
    expect(stringLike('a?c', 'abc')).toBe(true);
    expect(stringLike('a?c', 'ac')).toBe(false);
    expect(stringLike('a.c', 'abc')).toBe(false);
  });

  it.each(MODE_NAMES)(
    '%s: consumer may Put/UpdateItem on the ledger only in its own mode’s partition',
    (mode) => {
      const writes = statementsOf(consumerId(mode)).filter(
        (statement) => actionsOf(statement).some(isDynamoWrite) && !onIdempotencyTable(statement),
      );
      expect(writes).toEqual([
        {
          Sid: 'WriteOwnModePartitionOnly',
          Effect: 'Allow',
          Action: ledgerActions(mode),
          Resource: tableArn(),
          Condition: {
            'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`RUN#*#MODE#${mode}`] },
            // ForAllValues alone is true when the request has no leading key at all.
            Null: { 'dynamodb:LeadingKeys': 'false' },
          },
        },
      ]);
    },
  );

  it('grants no DynamoDB write anywhere except consumers’ statements bound to a partition pattern', () => {
    const consumerRoles = new Map(
      MODE_NAMES.map((mode) => {
        const fn = template.findResources('AWS::Lambda::Function')[consumerId(mode)];
        return [fn?.Properties.Role['Fn::GetAtt'][0] as string, mode];
      }),
    );
    // Writes to Powertools' table are checked below; every other write must be bound to a partition.
    const writes = allowStatements().filter(
      ({ statement }) =>
        actionsOf(statement).some(isDynamoWrite) &&
        !onIdempotencyTable(statement) &&
        !onProviderTable(statement),
    );
    expect(writes).toHaveLength(MODE_NAMES.length);
    for (const { roles, statement } of writes) {
      expect(roles).toHaveLength(1);
      const mode = consumerRoles.get(roles[0] as string);
      expect(mode).toBeDefined();
      expect(statement.Condition).toEqual({
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`RUN#*#MODE#${mode}`] },
        Null: { 'dynamodb:LeadingKeys': 'false' },
      });
    }
  });

  it('lets only the modes with an idempotency table use it, with exactly what Powertools sends', () => {
    const withTable = MODE_NAMES.filter((mode) => settingsOf(mode).idempotencyTable);
    expect(withTable).toEqual(['powertools-idempotency', 'powertools-message-id']);
    const roleOf = (mode: Mode): string =>
      template.findResources('AWS::Lambda::Function')[consumerId(mode)]?.Properties.Role['Fn::GetAtt'][0];
    const grants = allowStatements().filter(({ statement }) =>
      JSON.stringify(statement.Resource).includes(JSON.stringify(idempotencyTableArn())),
    );
    expect(grants).toEqual(
      withTable.map((mode) => ({
        roles: [roleOf(mode)],
        statement: {
          Sid: 'OwnIdempotencyRecordsOnly',
          Effect: 'Allow',
          Action: [...IDEMPOTENCY_RECORD_ACTIONS],
          Resource: idempotencyTableArn(),
          // Powertools keys records `<keyPrefix>#<hash>`; the handler's prefix is its mode.
          Condition: {
            'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${mode}#*`] },
            Null: { 'dynamodb:LeadingKeys': 'false' },
          },
        },
      })),
    );
    expect([...IDEMPOTENCY_RECORD_ACTIONS].sort()).toEqual([
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
    ]);
  });

  it('a mode’s pattern matches its own partitions only: no other mode’s, no run manifest', () => {
    // Mode names become part of an IAM pattern: a `#` or a wildcard in one could let it match
    // another mode's partition (e.g. a mode `x#MODE#y` would be matched by `RUN#*#MODE#y`).
    for (const mode of MODE_NAMES) expect(mode).toMatch(/^[a-z0-9-]+$/);
    const patternOf = (mode: Mode): string => {
      const [write] = statementsOf(consumerId(mode)).filter(
        (statement) => actionsOf(statement).some(isDynamoWrite) && !onIdempotencyTable(statement),
      );
      const condition = write?.Condition as
        | { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': string[] } }
        | undefined;
      const patterns = condition?.['ForAllValues:StringLike']['dynamodb:LeadingKeys'] ?? [];
      expect(patterns).toHaveLength(1);
      return patterns[0] as string;
    };
    // Ordinary run ids, and hostile ones (a `#`, a wildcard, another mode's key inside the run id).
    const runIds = (mode: Mode) => ['run-1', 'x', '*', `x#MODE#${mode}`, 'x#MANIFEST'];
    for (const mode of MODE_NAMES) {
      const pattern = patternOf(mode);
      for (const runId of runIds(mode)) {
        expect(stringLike(pattern, partitionKey(runId, mode)), `${pattern} vs own ${runId}`).toBe(true);
        expect(stringLike(pattern, `RUN#${runId}#MANIFEST`), `${pattern} vs manifest ${runId}`).toBe(false);
        for (const other of MODE_NAMES.filter((candidate) => candidate !== mode)) {
          expect(stringLike(pattern, partitionKey(runId, other)), `${pattern} vs ${other} ${runId}`).toBe(
            false,
          );
        }
      }
      expect(stringLike(pattern, 'RUN#x#MANIFEST')).toBe(false);
    }
  });

  it('gives the verifier read-only access: Query/GetItem on the ledger, receive/release on the DLQs, a FIFO DLQ’s count, nothing else', () => {
    const statements = statementsOf(stack.getLogicalId(stack.verifier.node.defaultChild as never));
    const actions = new Set(statements.flatMap(actionsOf));
    expect([...actions].sort()).toEqual([
      'dynamodb:GetItem',
      'dynamodb:Query',
      'logs:CreateLogStream',
      'logs:PutLogEvents',
      'sqs:ChangeMessageVisibility',
      'sqs:GetQueueAttributes',
      'sqs:ReceiveMessage',
    ]);
    // The count only on FIFO DLQs, where a sweep cannot see every message.
    const counted = statements.filter((statement) => actionsOf(statement).includes('sqs:GetQueueAttributes'));
    const resources = JSON.stringify(counted.map((statement) => statement.Resource));
    for (const mode of MODE_NAMES) {
      const dlq = stack.getLogicalId(stack.resourcesOf(mode).deadLetterQueue.node.defaultChild as never);
      expect(resources.includes(dlq), `${mode}'s DLQ`).toBe(isFifoMode(mode));
    }
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { DEAD_LETTER_QUEUE_URLS: Match.anyValue(), TABLE_NAME: Match.anyValue() } },
    });
  });

  it('writes logs only to each function’s own log group, with no AWS managed policy on any role', () => {
    for (const role of Object.values(template.findResources('AWS::IAM::Role'))) {
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    }
    for (const fn of [...MODE_NAMES.map((mode) => stack.resourcesOf(mode).consumer), stack.verifier]) {
      const logStatements = statementsOf(stack.getLogicalId(fn.node.defaultChild as never)).filter(
        (statement) => actionsOf(statement).some((action) => action.startsWith('logs:')),
      );
      expect(logStatements).toHaveLength(1);
      const logGroupId = stack.getLogicalId(fn.logGroup.node.defaultChild as never);
      expect(logStatements[0]?.Resource).toEqual({ 'Fn::GetAtt': [logGroupId, 'Arn'] });
    }
  });

  it('passes cdk-nag’s AWS Solutions rules, with the default modes and with every one (the pinned runtime acknowledged, with its reason)', () => {
    const app = new App({
      context: { 'aws:cdk:bundling-stacks': [] },
      outdir: mkdtempSync(join(tmpdir(), 'nag-')),
    });
    // With an email subscription, so the nag rules see the whole alarm path (topic, key, subscription).
    new DeliverySemanticsStack(app, 'Nag', {
      settings: { crashRate: 0, crashSeed: 'seed', alarmEmail: 'oncall@example.com' },
    });
    new DeliverySemanticsStack(app, 'NagAll', {
      settings: {
        ...EVERYTHING,
        alarmEmail: 'oncall@example.com',
        provisionedPollers: { minimumPollers: 2, maximumPollers: 10 },
      },
    });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    // Synth throws "Validation failed" and lists the violations if any rule is broken.
    expect(() => app.synth()).not.toThrow();
  });

  it('outputs every queue URL, DLQ URL, function name, the table and the deployed crash settings', () => {
    const outputs = Object.keys(template.findOutputs('*'));
    for (const id of ['AtMostOnce', 'AtLeastOnce', 'EffectivelyOnce', 'PowertoolsIdempotency']) {
      expect(outputs).toEqual(
        expect.arrayContaining([
          `${id}QueueUrl`,
          `${id}DeadLetterQueueUrl`,
          `${id}FunctionName`,
          `${id}BatchSize`,
        ]),
      );
    }
    expect(outputs).toEqual(
      expect.arrayContaining([
        'TableName',
        'VerifierFunctionName',
        'CrashRate',
        'CrashSeed',
        'TopologyVersion',
        'AlarmTopicArn',
      ]),
    );
  });

  it('applies crash and batch settings from context to every consumer (a FIFO mode’s batch clamped to 10)', () => {
    const settings = deploymentSettingsFromContext(
      (key) =>
        ({ crashRate: '0.05', crashSeed: 'demo', batchSize: '50', maxReceiveCount: '3', modes: 'all' })[key],
    );
    const { template: custom, stack: customStack } = synth(settings);
    for (const mode of MODE_NAMES) {
      const { BatchSize, MaximumBatchingWindowInSeconds } = mappingOf(custom, customStack, mode);
      // Lambda takes at most 10 per batch from a FIFO queue, and no batching window; AWS requires a
      // batching window for batches over 10 from a standard one.
      expect({ BatchSize, MaximumBatchingWindowInSeconds }, mode).toEqual(
        isFifoMode(mode)
          ? { BatchSize: FIFO_MAX_BATCH_SIZE, MaximumBatchingWindowInSeconds: undefined }
          : { BatchSize: 50, MaximumBatchingWindowInSeconds: expect.any(Number) },
      );
    }
    custom.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ CRASH_RATE: '0.05', CRASH_SEED: 'demo' }) },
    });
    custom.hasResourceProperties('AWS::SQS::Queue', {
      RedrivePolicy: Match.objectLike({ maxReceiveCount: 3 }),
    });
  });

  describe('the FIFO mode (fifo-versioned)', () => {
    const FIFO_MODES = MODE_NAMES.filter(isFifoMode);
    const STANDARD_MODES = MODE_NAMES.filter((mode) => !isFifoMode(mode));
    /** SQS's high-throughput FIFO: explicit deduplication ids, deduplicated and throttled per message group. */
    const FIFO_QUEUE = {
      FifoQueue: true,
      ContentBasedDeduplication: false,
      DeduplicationScope: 'messageGroup',
      FifoThroughputLimit: 'perMessageGroupId',
    };
    const logicalId = (construct: { node: { defaultChild?: unknown } }): string =>
      stack.getLogicalId(construct.node.defaultChild as never);
    const propertiesOf = (construct: { node: { defaultChild?: unknown } }) =>
      template.toJSON().Resources[logicalId(construct)]?.Properties;

    it('has fifo-versioned among the FIFO modes, and the default run has none', () => {
      expect(FIFO_MODES).toContain('fifo-versioned');
      expect(STANDARD_MODES).toContain('at-least-once');
      for (const mode of FIFO_MODES) expect(settingsOf(mode).inDefaultRun).toBe(false);
    });

    it.each(FIFO_MODES)(
      '%s: its queue and DLQ are both FIFO, with explicit deduplication ids and deduplication and throughput per message group',
      (mode) => {
        const { queue, deadLetterQueue } = stack.resourcesOf(mode);
        expect(propertiesOf(queue)).toMatchObject(FIFO_QUEUE);
        expect(propertiesOf(deadLetterQueue)).toMatchObject(FIFO_QUEUE);
        // No name given: CloudFormation generates one, with the `.fifo` suffix a FIFO queue needs.
        expect(propertiesOf(queue).QueueName).toBeUndefined();
        expect(propertiesOf(deadLetterQueue).QueueName).toBeUndefined();
      },
    );

    it.each(FIFO_MODES)('%s: its queue dead-letters to its own FIFO DLQ', (mode) => {
      const { queue, deadLetterQueue } = stack.resourcesOf(mode);
      expect(propertiesOf(queue).RedrivePolicy).toEqual({
        deadLetterTargetArn: { 'Fn::GetAtt': [logicalId(deadLetterQueue), 'Arn'] },
        maxReceiveCount: MODES[mode].maxReceiveCount,
      });
      // SQS refuses a standard DLQ for a FIFO queue.
      expect(propertiesOf(deadLetterQueue).FifoQueue).toBe(true);
    });

    it('leaves every other mode’s queue and DLQ standard, with no FIFO attribute', () => {
      for (const mode of STANDARD_MODES) {
        for (const construct of [stack.resourcesOf(mode).queue, stack.resourcesOf(mode).deadLetterQueue]) {
          const properties = propertiesOf(construct);
          for (const attribute of Object.keys(FIFO_QUEUE))
            expect(properties[attribute], mode).toBeUndefined();
        }
      }
      const fifoQueues = Object.values(template.findResources('AWS::SQS::Queue')).filter(
        (queue) => queue.Properties.FifoQueue === true,
      );
      expect(fifoQueues).toHaveLength(2 * FIFO_MODES.length);
    });

    it.each(FIFO_MODES)(
      '%s: its event source mapping reads its FIFO queue, at most 10 records per batch, with no batching window',
      (mode) => {
        const mapping = mappingOf(template, stack, mode);
        expect(mapping.BatchSize).toBeLessThanOrEqual(FIFO_MAX_BATCH_SIZE);
        expect(mapping).not.toHaveProperty('MaximumBatchingWindowInSeconds');
        expect(mapping.EventSourceArn).toEqual({
          'Fn::GetAtt': [logicalId(stack.resourcesOf(mode).queue), 'Arn'],
        });
        expect(mapping.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
      },
    );

    it('with context batchSize=100: a FIFO mode still gets 10 and no window, a standard mode 100 and a window', () => {
      const settings = deploymentSettingsFromContext((key) => ({ batchSize: '100', modes: 'all' })[key]);
      expect(settings.batchSize).toBe(100);
      const { template: large, stack: largeStack } = synth(settings);
      for (const mode of FIFO_MODES) {
        const mapping = mappingOf(large, largeStack, mode);
        expect(mapping.BatchSize, mode).toBe(FIFO_MAX_BATCH_SIZE);
        expect(mapping, mode).not.toHaveProperty('MaximumBatchingWindowInSeconds');
        // The outputs a driver reads say the same.
        large.hasOutput(modeOutputs(mode).batchSize, { Value: String(FIFO_MAX_BATCH_SIZE) });
        large.hasOutput(modeOutputs(mode).maxBatchingWindow, { Value: '0' });
      }
      for (const mode of STANDARD_MODES) {
        const mapping = mappingOf(large, largeStack, mode);
        expect(mapping.BatchSize, mode).toBe(100);
        expect(mapping.MaximumBatchingWindowInSeconds, mode).toBeGreaterThanOrEqual(1);
        large.hasOutput(modeOutputs(mode).batchSize, { Value: '100' });
      }
    });
  });

  describe('DLQ alarms: one per mode, to one encrypted, TLS-only topic', () => {
    const logicalId = (construct: { node: { defaultChild?: unknown } }): string =>
      stack.getLogicalId(construct.node.defaultChild as never);
    const topicRef = () => ({ Ref: logicalId(stack.alarmTopic) });

    it.each(MODE_NAMES)(
      '%s: alarms when its DLQ has ≥ 1 visible message, notifying the topic on ALARM and OK',
      (mode) => {
        const alarm = template.toJSON().Resources[logicalId(stack.resourcesOf(mode).deadLetterAlarm)];
        expect(alarm).toMatchObject({
          Type: 'AWS::CloudWatch::Alarm',
          Properties: {
            AlarmName: `Test-${mode}-dead-letters`,
            Namespace: 'AWS/SQS',
            MetricName: 'ApproximateNumberOfMessagesVisible',
            // The mode's own DLQ, not its source queue.
            Dimensions: [
              {
                Name: 'QueueName',
                Value: { 'Fn::GetAtt': [logicalId(stack.resourcesOf(mode).deadLetterQueue), 'QueueName'] },
              },
            ],
            Statistic: 'Maximum',
            Period: 60,
            Threshold: 1,
            ComparisonOperator: 'GreaterThanOrEqualToThreshold',
            EvaluationPeriods: 1,
            DatapointsToAlarm: 1,
            TreatMissingData: 'notBreaching',
            AlarmActions: [topicRef()],
            OKActions: [topicRef()],
          },
        });
        expect(alarm.Properties.AlarmDescription).toContain(mode);
      },
    );

    it("has exactly one alarm per mode, each on a different DLQ, the outbox relay's two, and one topic", () => {
      const relayAlarms = [stack.outbox?.iteratorAgeAlarm, stack.outbox?.failureAlarm].map((alarm) =>
        logicalId(alarm as never),
      );
      const alarms = Object.entries(template.findResources('AWS::CloudWatch::Alarm'))
        .filter(([id]) => !relayAlarms.includes(id))
        .map(([, alarm]) => alarm);
      const queues = alarms.map((alarm) => JSON.stringify(alarm.Properties.Dimensions));
      expect(new Set(queues).size).toBe(MODE_NAMES.length);
      expect(alarms).toHaveLength(MODE_NAMES.length);
      expect(Object.keys(template.findResources('AWS::SNS::Topic'))).toEqual([logicalId(stack.alarmTopic)]);
    });

    it('encrypts the topic with its own customer managed key, rotated, never alias/aws/sns', () => {
      const resources = template.toJSON().Resources;
      const topic = resources[logicalId(stack.alarmTopic)];
      expect(topic.Properties.KmsMasterKeyId).toEqual({
        'Fn::GetAtt': [logicalId(stack.alarmTopicKey), 'Arn'],
      });
      expect(JSON.stringify(topic)).not.toContain('alias/aws/sns');
      expect(resources[logicalId(stack.alarmTopicKey)]).toMatchObject({
        Type: 'AWS::KMS::Key',
        Properties: { EnableKeyRotation: true },
      });
    });

    it('lets CloudWatch use the key (kms:Decrypt, kms:GenerateDataKey*): without it alarms cannot publish', () => {
      const key = template.toJSON().Resources[logicalId(stack.alarmTopicKey)];
      const statements = key.Properties.KeyPolicy.Statement as Array<Record<string, unknown>>;
      const forCloudWatch = statements.filter(
        (statement) =>
          JSON.stringify(statement.Principal) === JSON.stringify({ Service: 'cloudwatch.amazonaws.com' }),
      );
      expect(forCloudWatch).toEqual([
        {
          Sid: 'CloudWatchAlarmsPublishToTheEncryptedTopic',
          Effect: 'Allow',
          Principal: { Service: 'cloudwatch.amazonaws.com' },
          Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
          Resource: '*',
        },
      ]);
    });

    it('denies publishing without TLS and lets only this stack’s alarms publish', () => {
      const policies = Object.values(template.findResources('AWS::SNS::TopicPolicy'));
      expect(policies).toHaveLength(1);
      const policy = policies[0];
      expect(policy?.Properties.Topics).toEqual([topicRef()]);
      const statements = policy?.Properties.PolicyDocument.Statement;
      expect(statements).toContainEqual(
        expect.objectContaining({
          Effect: 'Deny',
          Principal: '*',
          Action: 'sns:Publish',
          Resource: topicRef(),
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
      );
      // enforceSSL's policy replaces the topic's default one: CloudWatch needs an explicit Allow.
      expect(statements).toContainEqual({
        Sid: 'ThisStacksAlarmsPublish',
        Effect: 'Allow',
        Principal: { Service: 'cloudwatch.amazonaws.com' },
        Action: 'sns:Publish',
        Resource: topicRef(),
        Condition: {
          StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
          ArnLike: {
            'aws:SourceArn': {
              'Fn::Join': [
                '',
                [
                  'arn:',
                  { Ref: 'AWS::Partition' },
                  ':cloudwatch:',
                  { Ref: 'AWS::Region' },
                  ':',
                  { Ref: 'AWS::AccountId' },
                  ':alarm:Test-*',
                ],
              ],
            },
          },
        },
      });
      // Every alarm's name matches that pattern.
      for (const alarm of Object.values(template.findResources('AWS::CloudWatch::Alarm'))) {
        expect(alarm.Properties.AlarmName).toMatch(/^Test-/);
      }
    });

    it('outputs the topic ARN', () => {
      template.hasOutput(STACK_OUTPUTS.alarmTopicArn, { Value: topicRef() });
    });

    it('subscribes no one unless alarmEmail is set', () => {
      template.resourceCountIs('AWS::SNS::Subscription', 0);
    });

    it('subscribes the alarmEmail address (from context) to the topic', () => {
      const settings = deploymentSettingsFromContext((key) =>
        key === 'alarmEmail' ? ' oncall@example.com ' : undefined,
      );
      expect(settings.alarmEmail).toBe('oncall@example.com');
      const { template: subscribed, stack: withEmail } = synth(settings);
      const subscriptions = Object.values(subscribed.findResources('AWS::SNS::Subscription'));
      expect(subscriptions).toEqual([
        expect.objectContaining({
          Properties: {
            Protocol: 'email',
            Endpoint: 'oncall@example.com',
            TopicArn: { Ref: withEmail.getLogicalId(withEmail.alarmTopic.node.defaultChild as never) },
          },
        }),
      ]);
    });

    it.each([
      'oncall',
      'oncall@',
      '@example.com',
      'oncall@example',
      'on call@example.com',
      'a@b@example.com',
      'Team <oncall@example.com>',
      'oncall@example.com,other@example.com',
      `${'a'.repeat(250)}@example.com`,
      '',
    ])('refuses alarmEmail=%j at synth with a clear message', (alarmEmail) => {
      const read = () =>
        deploymentSettingsFromContext((key) => (key === 'alarmEmail' ? alarmEmail : undefined));
      expect(read).toThrow(InvalidSettingError);
      expect(read).toThrow(
        /context alarmEmail=.* is not an email address \(e\.g\. -c alarmEmail=oncall@example\.com/,
      );
    });

    it('refuses a non-string alarmEmail from cdk.json', () => {
      expect(() => deploymentSettingsFromContext((key) => (key === 'alarmEmail' ? 42 : undefined))).toThrow(
        /alarmEmail=42 is not an email address/,
      );
    });
  });

  it('derives the marker TTL from markerRetentionDays, and refuses at synth a retention that breaks the rule', () => {
    const { template: longer } = synth({ crashRate: 0, crashSeed: 'seed', markerRetentionDays: 60 });
    longer.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ MARKER_TTL_SECONDS: String(60 * 24 * 3600) }) },
    });
    // 4 days of markers: the guard would refuse events the source queue still legitimately holds.
    expect(() => synth({ crashRate: 0, crashSeed: 'seed', markerRetentionDays: 4 })).toThrow(
      InvalidSettingError,
    );
    expect(() => synth({ crashRate: 0, crashSeed: 'seed', markerRetentionDays: 4 })).toThrow(
      /markerRetentionDays=4 breaks the retention rule.*Keep markers at least 5 days/,
    );
    expect(() => synth({ crashRate: 0, crashSeed: 'seed', markerRetentionDays: 5 })).not.toThrow();
    expect(
      deploymentSettingsFromContext((key) => (key === 'markerRetentionDays' ? '45' : undefined)),
    ).toMatchObject({
      markerRetentionDays: 45,
    });
  });

  it.each([
    [{ markerRetentionDays: '0' }, /markerRetentionDays=0 must be a whole number of days/],
    [{ markerRetentionDays: '1.5' }, /markerRetentionDays=1.5 must be a whole number of days/],
    [{ markerRetentionDays: '366' }, /markerRetentionDays=366 must be a whole number of days from 1 to 365/],
    [{ crashRate: '2' }, /crashRate=2 must be between 0 and 1/],
    [{ crashRate: 'often' }, /crashRate=often is not a number/],
    [{ batchSize: '0' }, /batchSize=0/],
    [{ maxReceiveCount: '1.5' }, /maxReceiveCount=1.5/],
    [{ crashSeed: '' }, /crashSeed/],
  ])('refuses bad context %o with a clear message', (context, message) => {
    expect(() => deploymentSettingsFromContext((key) => (context as Record<string, string>)[key])).toThrow(
      InvalidSettingError,
    );
    expect(() => deploymentSettingsFromContext((key) => (context as Record<string, string>)[key])).toThrow(
      message,
    );
  });
});
