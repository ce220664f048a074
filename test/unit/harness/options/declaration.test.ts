import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MODES, MODES } from '../../../../contract/topology.js';
import {
  LOCAL_MAX_CONCURRENCY,
  localVisibilityTimeoutSeconds,
} from '../../../../harness/environments/local-timing.js';
import {
  DEFAULTS,
  OPTIONS,
  type OptionDeclaration,
  type OptionName,
} from '../../../../harness/options/declaration.js';
import { ENTRY_POINT_NAMES } from '../../../../harness/options/entry-points.js';
import { acceptedOptions, parseOptions } from '../../../../harness/options/parse.js';
import { readValue, useAt } from '../../../../harness/options/values.js';
import { PROJECT_ROOT } from '../../../../stack/bundling.js';

const names = Object.keys(OPTIONS) as OptionName[];

describe('the option declaration', () => {
  it('gives every entry point --help, and every option at least one entry point', () => {
    for (const entryPoint of ENTRY_POINT_NAMES) expect(acceptedOptions(entryPoint)).toContain('help');
    for (const name of names) {
      expect(
        ENTRY_POINT_NAMES.some((entryPoint) => useAt(name, entryPoint)),
        name,
      ).toBe(true);
    }
  });

  it('declares defaults its own validation accepts, as they would be typed', () => {
    for (const name of names) {
      const declaration: OptionDeclaration = OPTIONS[name];
      if (declaration.kind === 'flag') continue;
      for (const entryPoint of ENTRY_POINT_NAMES) {
        const use = useAt(name, entryPoint);
        for (const value of [use?.default, use?.quick]) {
          if (value === undefined || (Array.isArray(value) && value.length === 0)) continue;
          const typed = Array.isArray(value) ? value.join(',') : String(value);
          expect(readValue(name, declaration, typed), `${entryPoint} --${name}`).toEqual(value);
        }
      }
    }
  });

  it('names, in what one option needs, an option of the same entry points', () => {
    for (const name of names) {
      const needs = (OPTIONS[name] as OptionDeclaration).requires;
      if (!needs) continue;
      expect(names, name).toContain(needs.option);
      for (const entryPoint of ENTRY_POINT_NAMES) {
        if (useAt(name, entryPoint))
          expect(useAt(needs.option as OptionName, entryPoint), name).toBeDefined();
      }
    }
  });

  it('limits options to targets only at entry points that have --target', () => {
    for (const name of names) {
      if (!(OPTIONS[name] as OptionDeclaration).targets) continue;
      for (const entryPoint of ENTRY_POINT_NAMES) {
        if (useAt(name, entryPoint))
          expect(useAt('target', entryPoint), `${entryPoint} --${name}`).toBeDefined();
      }
    }
  });

  it('states the experiment’s defaults that code without a command line uses', () => {
    const { values } = parseOptions('experiment', []);
    const batchSize = MODES['effectively-once'].batchSize;
    expect(DEFAULTS).toEqual({
      messages: values.messages,
      accounts: values.accounts,
      crashRate: values['crash-rate'],
      batchSize,
      visibilityTimeoutSeconds: localVisibilityTimeoutSeconds(
        batchSize,
        LOCAL_MAX_CONCURRENCY,
        DEFAULT_MODES.length,
      ),
      workDelayRate: values['work-delay-rate'],
    });
  });
});

describe('the declarations by command', () => {
  it('declare each option in one file only: a second would silently replace the first in OPTIONS', async () => {
    const folder = `${PROJECT_ROOT}harness/options/declarations/`;
    const pieces = await Promise.all(
      readdirSync(folder)
        .filter((name) => name.endsWith('.ts'))
        .map(async (name) => [name, (await import(`${folder}${name}`)) as Record<string, unknown>] as const),
    );
    const declaredIn = new Map<string, string[]>();
    for (const [file, exports] of pieces) {
      for (const [name, value] of Object.entries(exports)) {
        if (!name.endsWith('_OPTIONS') || typeof value !== 'object' || value === null) continue;
        for (const option of Object.keys(value))
          declaredIn.set(option, [...(declaredIn.get(option) ?? []), file]);
      }
    }
    expect([...declaredIn].filter(([, files]) => files.length > 1)).toEqual([]);
    expect([...declaredIn.keys()].sort()).toEqual(Object.keys(OPTIONS).sort());
  });
});
