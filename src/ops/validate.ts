/** Validation as an operation: every offline check of the desired state, no server needed. */
import { shadowedRuleWarnings } from '../access/shadow.js';
import { portRuleWarnings } from '../access/tests.js';
import { countDeclarations, loadDesiredState, type Diagnostic } from '../desired/index.js';

export interface Validation {
  ok: boolean;
  errors: Diagnostic[];
  warnings: Diagnostic[];
  /** What the files declare (when they are valid). */
  counts?: { users: number; devices: number; rules: number };
}

export async function validateDesired(request: { file: string }): Promise<Validation> {
  // Secrets are checked for shape; one that cannot be read here is a warning (forks get no secrets).
  const result = await loadDesiredState(request.file, { secrets: 'check' });
  const warnings = [
    ...(result.warnings ?? []),
    ...(result.ok ? [...portRuleWarnings(result.state), ...shadowedRuleWarnings(result.state)] : []),
  ];
  if (!result.ok) return { ok: false, errors: result.diagnostics, warnings };
  return { ok: true, errors: [], warnings, counts: countDeclarations(result.state) };
}
