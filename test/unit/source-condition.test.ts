import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BUNDLING, PROJECT_ROOT, SOURCE_CONDITION } from '../../stack/bundling.js';
import config from '../../vitest.config.js';

/**
 * The repository's packages resolve to their src/ only where a resolver is given the condition; one
 * that is not would load a stale dist/ (or fail on a fresh clone, which has none). Every place that
 * names it, checked against the one constant.
 */
describe('the source condition, in every resolver', () => {
  const read = (path: string) => readFileSync(`${PROJECT_ROOT}${path}`, 'utf8');

  it('is in every Vitest project (inline projects do not inherit the root resolve options)', () => {
    const projects = (config.test?.projects ?? []) as {
      test?: { name?: string };
      ssr?: { resolve?: { conditions?: string[] } };
      environments?: { __vitest__?: { resolve?: { conditions?: string[] } } };
    }[];
    expect(projects.length).toBeGreaterThan(0);
    const without = projects
      .filter(
        (project) =>
          // The tests' own environment, and the one a project's globalSetup runs in.
          !project.ssr?.resolve?.conditions?.includes(SOURCE_CONDITION) ||
          !project.environments?.__vitest__?.resolve?.conditions?.includes(SOURCE_CONDITION),
      )
      .map((project) => project.test?.name);
    expect(without).toEqual([]);
  });

  it('is in tsconfig, .npmrc (Node and tsx under npm) and esbuild', () => {
    expect(read('tsconfig.json')).toContain(`"customConditions": ["${SOURCE_CONDITION}"]`);
    expect(read('.npmrc')).toMatch(new RegExp(`^node-options=--conditions=${SOURCE_CONDITION}$`, 'm'));
    expect(BUNDLING.conditions).toContain(SOURCE_CONDITION);
  });

  it("is the condition each package's exports name for its sources", () => {
    for (const name of ['consumer-cores', 'cdk-constructs']) {
      const manifest = JSON.parse(read(`packages/${name}/package.json`)) as {
        exports: Record<string, string | Record<string, string>>;
      };
      for (const [subpath, target] of Object.entries(manifest.exports)) {
        if (typeof target === 'string') continue;
        // First, so it wins over `types` and `default` wherever it is set.
        expect(Object.keys(target), `${name} ${subpath}`).toEqual([SOURCE_CONDITION, 'types', 'default']);
        expect(target[SOURCE_CONDITION]).toMatch(/^\.\/src\/.*\.ts$/);
      }
    }
  });
});
