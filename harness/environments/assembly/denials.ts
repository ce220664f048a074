import type { AssemblyDeployment } from './deploy.js';

/**
 * The deployment's denials counted per caller, named by mode where the caller is a mode's function
 * or its poller (the stack's `<Mode>FunctionName` outputs say which function is whose).
 */
export function denialsByFunction(deployment: AssemblyDeployment): { who: string; count: number }[] {
  const modeOfFunction = new Map<string, string>();
  for (const [key, value] of Object.entries(deployment.stack.outputs)) {
    const match = /^(.+)FunctionName$/.exec(key);
    if (match?.[1]) modeOfFunction.set(value, kebab(match[1]));
  }
  const counts = new Map<string, number>();
  for (const decision of deployment.denials) {
    const fn = decision.principal.replace(/ \(event source mapping\)$/, '');
    const mode = modeOfFunction.get(fn);
    const who = mode
      ? `${mode}${fn === decision.principal ? '' : ' (event source mapping)'}`
      : decision.principal;
    counts.set(who, (counts.get(who) ?? 0) + 1);
  }
  return [...counts].map(([who, count]) => ({ who, count }));
}

/** `AtMostOnce` → `at-most-once`; `Verifier` → `verifier`. */
function kebab(id: string): string {
  return id.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
}
