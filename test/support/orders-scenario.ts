import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createAtLeastOnceHandler } from '@sqs-delivery-semantics/consumer-cores/at-least-once';
import { createAtMostOnceHandler } from '@sqs-delivery-semantics/consumer-cores/at-most-once';
import type { ConsumerLogger } from '@sqs-delivery-semantics/consumer-cores/logger';
import {
  appliedFromList,
  eachAppliedOnce,
  type HandlerFactory,
  type Scenario,
  type ScenarioEvent,
} from '@sqs-delivery-semantics/explorer';

/**
 * The five-order scenario: five orders in batches of 2, each adding its quantity to one SKU's
 * reserved count and appending its id to the item's `orders` list (a list, not a set: an order
 * applied twice shows twice). Written as a team would, on the cores it installs.
 */
export const SILENT: ConsumerLogger = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

export const ORDERS: readonly ScenarioEvent[] = [1, 2, 3, 4, 5].map((n) => ({
  id: `order-${n}`,
  body: { eventId: `order-${n}`, createdAt: new Date().toISOString(), sku: 'A', quantity: n },
}));

/** The order's write: the reservation and the order's id on the SKU's list, in one update. */
export function reserve(tableName: string, order: { eventId: string; quantity?: unknown }) {
  return {
    TableName: tableName,
    Key: { pk: 'SKU#A' },
    UpdateExpression:
      'ADD reserved :quantity SET #orders = list_append(if_not_exists(#orders, :none), :order)',
    ExpressionAttributeNames: { '#orders': 'orders' },
    ExpressionAttributeValues: {
      ':quantity': Number(order.quantity),
      ':none': [],
      ':order': [order.eventId],
    },
  };
}

export function ordersScenario(
  name: string,
  handler: HandlerFactory<'stock'>,
  overrides: Partial<Scenario<'stock'>> = {},
): Scenario<'stock'> {
  return {
    name,
    promise: 'each order reserved exactly once',
    tables: {
      stock: {
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      },
    },
    events: ORDERS,
    batches: [2, 2, 1],
    handler,
    invariant: eachAppliedOnce(appliedFromList('stock', 'orders')),
    ...overrides,
  };
}

/** Delete first: the batch is deleted, then each order's work. */
export const deleteFirst: HandlerFactory<'stock'> = ({ ddb, sqs, queueUrl, tables }) =>
  createAtMostOnceHandler({
    sqs,
    queueUrl,
    logger: SILENT,
    work: async (order) => {
      await ddb.send(new UpdateCommand(reserve(tables.stock, order)));
    },
  });

/** Work first: each order's work, then the acknowledgement. */
export const workFirst: HandlerFactory<'stock'> = ({ ddb, tables }) =>
  createAtLeastOnceHandler({
    logger: SILENT,
    work: async (order) => {
      await ddb.send(new UpdateCommand(reserve(tables.stock, order)));
    },
  });
