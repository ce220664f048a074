import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { deploymentSettingsFromContext } from '../../contract/deployment-settings.js';
import { OPTIONS } from '../../harness/options/declaration.js';
import { PROJECT_ROOT } from '../../lib/bundling.js';

const deploying = readFileSync(`${PROJECT_ROOT}docs/deploying.md`, 'utf8');

/** The `-c` keys bin/app.ts reads: the settings' own (recorded as they are asked for) and the stack's name. */
function contextKeys(): string[] {
  const asked = new Set<string>(['stackName']);
  deploymentSettingsFromContext((key) => {
    asked.add(key);
    return undefined;
  });
  return [...asked].sort();
}

describe('docs/deploying.md cannot drift from the code', () => {
  it('documents every context key the app reads, and no other', () => {
    const table = deploying.slice(deploying.indexOf('| context | meaning | default |'));
    const rows = table.slice(0, table.indexOf('\n\n'));
    const documented = [...rows.matchAll(/^\| `([A-Za-z]+)` \|/gm)].map((match) => match[1] ?? '').sort();
    expect(documented).toEqual(contextKeys());
  });

  it('lists exactly the experiment options the declarations accept on --target embedded only', () => {
    const line = deploying.slice(deploying.indexOf('Embedded only: '));
    const paragraph = line.slice(0, line.indexOf('\n\n'));
    const documented = [...paragraph.matchAll(/`(--[a-z-]+)`/g)].map((match) => match[1] ?? '').sort();
    const embeddedOnly = Object.entries(OPTIONS)
      .filter(([, option]) => {
        const targets = (option as { targets?: { only: readonly string[] } }).targets;
        return targets?.only.every((target) => target === 'embedded') ?? false;
      })
      .map(([name]) => `--${name}`)
      .sort();
    expect(documented).toEqual(embeddedOnly);
  });
});
