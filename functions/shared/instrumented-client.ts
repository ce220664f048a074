import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** A command as the document client sends it (tell them apart with instanceof: bundles rename classes). */
export interface SentCommand {
  readonly input: unknown;
}

export interface ClientHooks {
  /** May return a replacement command (the same operation, evidence added); undefined sends it as is. */
  readonly before?: (command: SentCommand) => SentCommand | undefined;
  /** After the answer (`error` unset) or the failure, before the core sees either. */
  readonly after?: (command: SentCommand, error?: unknown) => Promise<void>;
}

/**
 * The lab's seam into a core: the client the core is given, with hooks around each send. The
 * core's code is untouched; what it sends reaches the same client (its middleware, its retries,
 * a test's aws-sdk-client-mock), so faults and evidence come from outside.
 */
export function instrumentClient(base: DynamoDBDocumentClient, hooks: ClientHooks): DynamoDBDocumentClient {
  const instrumented = Object.create(base) as DynamoDBDocumentClient;
  const send = async (command: SentCommand, ...rest: unknown[]): Promise<unknown> => {
    const sent = hooks.before?.(command) ?? command;
    let answer: unknown;
    try {
      answer = await (base.send as (command: unknown, ...rest: unknown[]) => Promise<unknown>).call(
        base,
        sent,
        ...rest,
      );
    } catch (error) {
      await hooks.after?.(sent, error);
      throw error;
    }
    await hooks.after?.(sent);
    return answer;
  };
  Object.defineProperty(instrumented, 'send', { value: send });
  return instrumented;
}

/**
 * An Update with more to write: `ADD` counters and `SET` attributes joined to its own `SET` clause.
 * Its operation, key and condition stay as they are. Only an expression that is one SET clause is
 * accepted: anything else is a lab bug, and says so.
 */
export function withMoreAttributes<
  U extends {
    readonly UpdateExpression?: string | undefined;
    readonly ExpressionAttributeNames?: Record<string, string> | undefined;
    readonly ExpressionAttributeValues?: Record<string, unknown> | undefined;
  },
>(update: U, more: { readonly add?: Record<string, number>; readonly set: Record<string, unknown> }): U {
  const expression = update.UpdateExpression ?? '';
  if (!/^SET\s/.test(expression) || /\b(ADD|REMOVE|DELETE)\s/.test(expression)) {
    throw new Error(`the lab can add evidence to a SET-only update, not to "${expression}"`);
  }
  const names: Record<string, string> = { ...update.ExpressionAttributeNames };
  const values: Record<string, unknown> = { ...update.ExpressionAttributeValues };
  const alias = (kind: 'add' | 'set', name: string, value: unknown, index: number): string => {
    names[`#lab${kind}${index}`] = name;
    values[`:lab${kind}${index}`] = value;
    return `#lab${kind}${index}`;
  };
  const adds = Object.entries(more.add ?? {}).map(
    ([name, value], index) => `${alias('add', name, value, index)} :labadd${index}`,
  );
  const sets = Object.entries(more.set).map(
    ([name, value], index) => `${alias('set', name, value, index)} = :labset${index}`,
  );
  return {
    ...update,
    UpdateExpression: `${adds.length > 0 ? `ADD ${adds.join(', ')} ` : ''}${expression}${sets.length > 0 ? `, ${sets.join(', ')}` : ''}`,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}
