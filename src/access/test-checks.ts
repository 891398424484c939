/**
 * The offline checks of a desired state's `tests:` (their notation, the users and devices they
 * name) and the warnings about rules a kernel stores without ports: what reading the files needs,
 * without the evaluator that runs the tests (tests.ts).
 */
import { userKey } from '../model/keys.js';
import { parseIpAddress } from '../model/net.js';
import type { DesiredRule, DesiredState, DesiredTest, DesiredUser, SourceLocation } from '../model/state.js';
import type { Diagnostic } from '../desired/types.js';
import { parseFrom, parseTo } from './notation.js';

/** A diagnostic at a field of a source location (or at the fallback path when it has none). */
export function diagnosticAt(
  source: SourceLocation | undefined,
  field: string | undefined,
  fallback: string,
  message: string,
): Diagnostic {
  const where = (field ? source?.fields?.[field] : undefined) ?? source;
  const path = where?.path ?? (field ? `${fallback}.${field}` : fallback);
  return where ? { file: where.file, line: where.line, column: where.column, path, message } : { path, message };
}

/** The checks `validate` runs on `tests:` and on the evaluator's settings. */
export function checkAccessTests(state: DesiredState): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  (state.settings.server_addresses ?? []).forEach((address, i) => {
    if (!parseIpAddress(address)) {
      diagnostics.push(
        diagnosticAt(
          state.settings.source,
          `server_addresses[${i}]`,
          'settings',
          'must be an IP address such as 10.3.2.1',
        ),
      );
    }
  });
  const tests = state.tests ?? [];
  // Only when there are tests to check: a fleet's desired state declares tens of thousands of users.
  const users = new Map<string, DesiredUser>(tests.length > 0 ? state.users.map((u) => [userKey(u.email), u]) : []);
  const names = new Map<string, DesiredTest>();
  tests.forEach((test, i) => {
    const fallback = `tests[${i}]`;
    const from = parseFrom(test.from);
    if (!from.ok) diagnostics.push(diagnosticAt(test.source, 'from', fallback, from.message));
    else if (from.value.kind !== 'everyone') {
      // EMAIL/* needs the user only: a policy test needs no device.
      const user = users.get(from.value.user);
      if (!user)
        diagnostics.push(diagnosticAt(test.source, 'from', fallback, `no user ${from.value.user} is declared`));
      else if (
        from.value.kind === 'device' &&
        !user.devices.some((d) => d.name === (from.value as { device: string }).device)
      ) {
        diagnostics.push(
          diagnosticAt(
            test.source,
            'from',
            fallback,
            `user ${from.value.user} declares no device named ${from.value.device}`,
          ),
        );
      }
    }
    const to = parseTo(test.to);
    if (!to.ok) diagnostics.push(diagnosticAt(test.source, 'to', fallback, to.message));
    const first = names.get(test.name);
    if (first) {
      const there = first.source ? ` (first at ${first.source.file}:${first.source.line})` : '';
      diagnostics.push(
        diagnosticAt(
          test.source,
          'name',
          fallback,
          `another test has the name "${test.name}"${there}; give each test its own name`,
        ),
      );
    } else names.set(test.name, test);
  });
  return diagnostics;
}

/**
 * With `settings.port_rules: false`, every declared rule with ports: a 0.7.36 server on a kernel
 * without port-rule support stores it without them (docs/rule-semantics.md §5.1.1), so it matches every protocol and
 * port. Warnings of `validate` and `plan`; tests, explain and access changes evaluate it so.
 */
export function portRuleWarnings(state: DesiredState): Diagnostic[] {
  if (state.settings.port_rules !== false) return [];
  const warnings: Diagnostic[] = [];
  const scopes: [string, readonly DesiredRule[]][] = [
    ...state.users.map((u, i): [string, DesiredRule[]] => [`users[${i}].rules`, u.rules]),
    ['rules', state.rules],
  ];
  for (const [path, rules] of scopes) {
    rules.forEach((rule, i) => {
      if (rule.port_type === null) return;
      const ports = `${rule.port_type} ${rule.port_range ?? ''}`.trim();
      const verb = rule.action === 'accept' ? 'accepts' : 'drops';
      warnings.push(
        diagnosticAt(
          rule.source,
          'port_type',
          `${path}[${i}]`,
          `settings.port_rules is false: a 0.7.36 server on a kernel without port-rule support stores this rule ` +
            `without its ports (${ports}), so it ${verb} every protocol and port to ${rule.destination}; ` +
            'tests, explain and access changes evaluate it so. Declare it without port_type and port_range to say what the server does',
        ),
      );
    });
  }
  return warnings;
}
