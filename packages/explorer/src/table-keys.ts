import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import type { CellEnvironment } from './execution-environment.js';

interface KeyedWrite {
  readonly TableName?: string;
  readonly Key?: Record<string, unknown>;
  readonly Item?: Record<string, unknown>;
}

/** The items a DynamoDB write names, `table|key`: a Put's key read from the table's key schema. */
export class TableKeys {
  private readonly schemas = new Map<string, Promise<string[]>>();
  constructor(private readonly env: CellEnvironment) {}

  /** The items a write names; none when they cannot be read (the request goes on, with no conflict offered). */
  async writesOf(operation: string, text: string): Promise<string[]> {
    try {
      return await this.readWrites(operation, text);
    } catch {
      return [];
    }
  }

  private async readWrites(operation: string, text: string): Promise<string[]> {
    let body: { TransactItems?: Record<string, KeyedWrite>[] } & KeyedWrite;
    try {
      body = JSON.parse(text);
    } catch {
      return [];
    }
    if (operation === 'TransactWriteItems') {
      return Promise.all((body.TransactItems ?? []).map((item) => this.itemOf(Object.values(item)[0] ?? {})));
    }
    if (operation === 'PutItem' || operation === 'UpdateItem' || operation === 'DeleteItem') {
      return [await this.itemOf(body)];
    }
    return [];
  }

  private async itemOf(write: KeyedWrite): Promise<string> {
    const table = write.TableName ?? '';
    let key = write.Key;
    if (key === undefined && write.Item !== undefined) {
      const names = await this.keyNames(table);
      key = Object.fromEntries(names.map((name) => [name, write.Item?.[name]]));
    }
    const sorted = Object.keys(key ?? {})
      .sort()
      .map((name) => [name, key?.[name]]);
    return `${table}|${JSON.stringify(sorted)}`;
  }

  private keyNames(table: string): Promise<string[]> {
    let names = this.schemas.get(table);
    if (names === undefined) {
      names = this.env.dynamodb
        .send(new DescribeTableCommand({ TableName: table }))
        .then((answer) => (answer.Table?.KeySchema ?? []).map((element) => element.AttributeName ?? ''));
      this.schemas.set(table, names);
    }
    return names;
  }
}
