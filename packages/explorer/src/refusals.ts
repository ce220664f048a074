import { Readable } from 'node:stream';

/**
 * The answers an interleaving's scheduler gives a held request instead of sending it: the refusals
 * DynamoDB and SQS document for a request that meets a concurrent one, as the SDK reads them.
 */

/** A refusal the scheduler answers a held request with, as DynamoDB documents it for concurrent requests. */
export type Refusal =
  /** `conflicting`: the indexes of a transaction's items that are in the other one (the rest `None`). */
  | { readonly kind: 'transaction-conflict'; readonly conflicting: readonly number[] }
  | { readonly kind: 'transaction-in-progress' }
  /** A FIFO queue's delete with a receipt handle that expired (another receive came since). */
  | { readonly kind: 'receipt-handle-expired' };

/**
 * DynamoDB's answers to a request that meets a concurrent one ("Transaction conflict handling in
 * DynamoDB", the Developer Guide): a TransactWriteItems whose item is in another ongoing
 * transaction is cancelled, `TransactionCanceledException` with `TransactionConflict` as the
 * reason of that item (`None` for the others); a PutItem, UpdateItem or DeleteItem on an item of
 * an ongoing transaction fails with `TransactionConflictException`. A transaction retried with its
 * `ClientRequestToken` while the first is still in progress gets `TransactionInProgressException`
 * (the TransactWriteItems API reference). Both are 400s the SDK reads as it reads DynamoDB's.
 */
export function refusalResponse(refusal: Refusal, text: string) {
  if (refusal.kind === 'receipt-handle-expired') return expiredHandleResponse(text);
  let body: Record<string, unknown>;
  const items = transactItemCount(text);
  if (refusal.kind === 'transaction-in-progress') {
    body = {
      __type: 'com.amazonaws.dynamodb.v20120810#TransactionInProgressException',
      message: 'Transaction is in progress (the explorer: the first attempt with this token is undecided)',
    };
  } else if (items === undefined) {
    body = {
      __type: 'com.amazonaws.dynamodb.v20120810#TransactionConflictException',
      message: 'Transaction is ongoing for the item',
    };
  } else {
    const reasons = Array.from({ length: items }, (_, index) =>
      refusal.conflicting.includes(index)
        ? { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' }
        : { Code: 'None' },
    );
    body = {
      __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
      Message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((reason) => reason.Code).join(', ')}]`,
      CancellationReasons: reasons,
    };
  }
  return {
    statusCode: 400,
    reason: 'Bad Request',
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'explorer-refused' },
    body: Readable.from([Buffer.from(JSON.stringify(body))]),
  };
}

/**
 * SQS's answer to a FIFO delete whose receipt handle expired ("Why do I get the error 'receipt
 * handle has expired'", the Knowledge Center): DeleteMessageBatch fails each entry in a 200,
 * DeleteMessage is a 400 `InvalidParameterValue`.
 */
function expiredHandleResponse(text: string) {
  const reason = 'Value for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.';
  let entries: { Id?: string }[] | undefined;
  try {
    entries = (JSON.parse(text) as { Entries?: { Id?: string }[] }).Entries;
  } catch {
    entries = undefined;
  }
  const batch = Array.isArray(entries);
  const body = batch
    ? {
        Successful: [],
        Failed: (entries ?? []).map((entry) => ({
          Id: entry.Id,
          SenderFault: true,
          Code: 'ReceiptHandleIsInvalid',
          Message: reason,
        })),
      }
    : { __type: 'com.amazonaws.sqs#InvalidParameterValue', message: reason };
  return {
    statusCode: batch ? 200 : 400,
    reason: batch ? 'OK' : 'Bad Request',
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amzn-requestid': 'explorer-refused',
      ...(batch ? {} : { 'x-amzn-query-error': 'InvalidParameterValue;Sender' }),
    },
    body: Readable.from([Buffer.from(JSON.stringify(body))]),
  };
}

function transactItemCount(text: string): number | undefined {
  try {
    const items = (JSON.parse(text) as { TransactItems?: unknown[] }).TransactItems;
    return Array.isArray(items) ? items.length : undefined;
  } catch {
    return undefined;
  }
}
