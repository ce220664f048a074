import { LoggedFunction } from '@sqs-delivery-semantics/cdk-constructs';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { Construct } from 'constructs';
import { handlerEntry } from './bundling.js';
import { LAB_PACKAGING } from './nodejs-bundling.js';

export interface PaymentProviderProps {
  /**
   * How long a request holds its idempotency key before a repeat may take it over (the provider
   * died mid-request). Wired to PROVIDER_LEASE_SECONDS.
   * @default 10
   */
  readonly leaseSeconds?: number;
}

/**
 * The key and TTL names services/payment-provider/provider-table.ts writes (stack/ may not import
 * services/; test/infra/payment-provider.test.ts checks that the two agree).
 */
const TTL_ATTRIBUTE = 'expiresAt';
const DEFAULT_LEASE_SECONDS = 10;

/** The provider's DynamoDB actions: the key (conditional Put, Update, Get) and the charge (Put, in a transaction). */
const PROVIDER_TABLE_ACTIONS = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:GetItem'] as const;

/**
 * The stand-in payment provider (services/payment-provider/handler.ts) as its own small service:
 * its own table, its own function, and a Function URL that only signed (AWS_IAM) callers may invoke.
 * Consumers get {@link grantCharge}; the verifier {@link grantReadCharges}.
 */
export class PaymentProvider extends Construct {
  /** The Function URL (`https://<id>.lambda-url.<region>.on.aws/`), for PROVIDER_URL. */
  public readonly url: string;
  public readonly table: dynamodb.Table;
  public readonly fn: NodejsFunction;
  public readonly functionUrl: lambda.FunctionUrl;

  constructor(scope: Construct, id: string, props: PaymentProviderProps = {}) {
    super(scope, id);
    const leaseSeconds = props.leaseSeconds ?? DEFAULT_LEASE_SECONDS;

    this.table = new dynamodb.Table(this, 'Charges', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TTL_ATTRIBUTE,
      // A sandbox experiment: `cdk destroy` should leave nothing behind.
      removalPolicy: RemovalPolicy.DESTROY,
    });

    // Its own role, writing to its own log group only (not AWSLambdaBasicExecutionRole's every log group).
    this.fn = new LoggedFunction(this, 'Function', {
      ...LAB_PACKAGING,
      // A sandbox: `cdk destroy` removes its log group too (LoggedFunction retains by default).
      logGroupRemovalPolicy: RemovalPolicy.DESTROY,
      entry: handlerEntry('payment-provider/handler'),
      // Longer than a lease: a request overtaken by a repeat finds its lease gone and commits nothing.
      timeout: Duration.seconds(leaseSeconds + 5),
      memorySize: 256,
      environment: {
        PROVIDER_TABLE_NAME: this.table.tableName,
        PROVIDER_LEASE_SECONDS: String(leaseSeconds),
      },
    });
    // Wired just above (PROVIDER_TABLE_NAME), granted here.
    this.table.grant(this.fn, ...PROVIDER_TABLE_ACTIONS);

    this.functionUrl = this.fn.addFunctionUrl({ authType: lambda.FunctionUrlAuthType.AWS_IAM });
    this.url = this.functionUrl.url;
  }

  /**
   * Lets `grantee` charge through the Function URL, and nothing else: `lambda:InvokeFunctionUrl`
   * (condition `lambda:FunctionUrlAuthType` = AWS_IAM) and `lambda:InvokeFunction` (condition
   * `lambda:InvokedViaFunctionUrl` = true, so not a direct Invoke), both on the provider function.
   * AWS requires both for Function URLs created since October 2025; aws-cdk-lib's grantInvokeUrl
   * adds both (2.276.0, checked by test/infra/payment-provider.test.ts).
   */
  grantCharge(grantee: iam.IGrantable): iam.Grant {
    return this.fn.grantInvokeUrl(grantee);
  }

  /**
   * Lets `grantee` list a run's charges: Query on the charge partitions (`CHARGES#<runId>`) only,
   * not the keys' items with their saved responses; no index, no write.
   */
  grantReadCharges(grantee: iam.IGrantable): iam.Grant {
    return iam.Grant.addToPrincipal({
      grantee,
      actions: ['dynamodb:Query'],
      resourceArns: [this.table.tableArn],
      conditions: {
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CHARGES#*'] },
        // ForAllValues alone is true when the request has no leading key at all.
        Null: { 'dynamodb:LeadingKeys': 'false' },
      },
    });
  }
}
