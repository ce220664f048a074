import { describe, expect, it } from 'vitest';
import {
  checkSqsMappingRole,
  InvalidParameterValueException,
} from '../../../../../harness/environments/assembly/iam/create-time-check.js';
import {
  AT_LEAST_ONCE_QUEUE,
  AT_LEAST_ONCE_STATEMENTS,
  atLeastOnceRole,
  resourcePolicyOf,
  withoutAction,
} from './iam-support.js';

describe('checkSqsMappingRole: Lambda refuses a mapping whose role cannot poll', () => {
  it('accepts the synthesized role: its Deny applies to the code only, not to the poller', async () => {
    await expect(
      checkSqsMappingRole(atLeastOnceRole(), AT_LEAST_ONCE_QUEUE, resourcePolicyOf),
    ).resolves.toBeUndefined();
  });

  it('refuses a role whose Deny lost its condition, as Lambda does, naming the statement', async () => {
    const unconditional = atLeastOnceRole(
      AT_LEAST_ONCE_STATEMENTS.map(({ Condition, ...rest }) =>
        rest.Sid === 'OnlyTheEventSourceMappingDeletes'
          ? rest
          : { ...rest, ...(Condition ? { Condition } : {}) },
      ),
    );
    const refusal = checkSqsMappingRole(unconditional, AT_LEAST_ONCE_QUEUE, resourcePolicyOf);
    await expect(refusal).rejects.toThrow(InvalidParameterValueException);
    await expect(refusal).rejects.toThrow(
      'The provided execution role does not have permissions to call DeleteMessage on SQS (IAM denied AtLeastOnceFunction ' +
        `sqs:DeleteMessage on ${AT_LEAST_ONCE_QUEUE}: explicit deny by AtLeastOnceFunctionRoleDefaultPolicy972C0ED1 OnlyTheEventSourceMappingDeletes)`,
    );
    await expect(refusal).rejects.toMatchObject({ statusCode: 400, name: 'InvalidParameterValueException' });
  });

  it('refuses a role missing one of the three actions', async () => {
    const document = withoutAction({ Statement: AT_LEAST_ONCE_STATEMENTS }, 'sqs:GetQueueAttributes');
    const lacking = atLeastOnceRole([document.Statement].flat());
    await expect(checkSqsMappingRole(lacking, AT_LEAST_ONCE_QUEUE, resourcePolicyOf)).rejects.toThrow(
      /^The provided execution role does not have permissions to call GetQueueAttributes on SQS/,
    );
  });
});
