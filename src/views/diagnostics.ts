/** Problems found in the desired state, as people read them and as GitHub Actions annotates them. */
import { formatDiagnostic, type Diagnostic } from '../model/diagnostic.js';
import { githubData, githubProperty, inertText, jsonDocument } from './escape.js';

export { formatDiagnostic };

/**
 * A `--format github` annotation: message and properties escaped as GitHub documents (`%25`, `%0D`,
 * `%0A`, and `%3A`, `%2C` in properties), then every other control character shown as `\u` escape.
 */
export function githubAnnotation(d: Diagnostic, level: 'error' | 'warning' = 'error'): string {
  const properties = [
    d.file !== undefined ? `file=${inertText(githubProperty(d.file))}` : undefined,
    d.line !== undefined ? `line=${d.line}` : undefined,
    d.column !== undefined ? `col=${d.column}` : undefined,
  ].filter((p) => p !== undefined);
  const message = d.path ? `${d.path}: ${d.message}` : d.message;
  return `::${level}${properties.length > 0 ? ` ${properties.join(',')}` : ''}::${inertText(githubData(message))}`;
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

export type ValidationFormat = 'text' | 'github' | 'json' | 'sarif';

/** Text for one of the two output streams, in the order it is written. */
export interface Output {
  stream: 'stdout' | 'stderr';
  text: string;
}

/**
 * What `netform validate` prints: JSON or annotations on stdout; in text, the problems on stderr
 * (a failing access test among them: views/access.ts failedTestDiagnostics). Then, but for JSON, how many errors there
 * are in `names.input` (stderr), or what the valid files declare (stdout, naming `names.valid`).
 * SARIF is written by views/sarif.ts.
 */
export function validationOutput(
  result: {
    ok: boolean;
    errors: Diagnostic[];
    warnings: Diagnostic[];
    counts?: Record<'users' | 'devices' | 'rules', number>;
  },
  format: Exclude<ValidationFormat, 'sarif'>,
  names: { input: string; valid: string },
): Output[] {
  const { errors, warnings } = result;
  if (format === 'json') {
    const entries = [
      ...errors.map((d) => ({ ...d, severity: 'error' })),
      ...warnings.map((d) => ({ ...d, severity: 'warning' })),
    ];
    return [{ stream: 'stdout', text: jsonDocument(entries) }];
  }
  const out: Output[] =
    format === 'github'
      ? [
          ...errors.map((d): Output => ({ stream: 'stdout', text: `${githubAnnotation(d)}\n` })),
          ...warnings.map((d): Output => ({ stream: 'stdout', text: `${githubAnnotation(d, 'warning')}\n` })),
        ]
      : [
          ...errors.map((d): Output => ({ stream: 'stderr', text: `${formatDiagnostic(d)}\n` })),
          ...warnings.map((d): Output => ({ stream: 'stderr', text: `warning: ${formatDiagnostic(d)}\n` })),
        ];
  if (!result.ok) return [...out, { stream: 'stderr', text: `${plural(errors.length, 'error')} in ${names.input}\n` }];
  const counts = result.counts!;
  const warned = warnings.length > 0 ? ` (${plural(warnings.length, 'warning')})` : '';
  const declared = `${plural(counts.users, 'user')}, ${plural(counts.devices, 'device')}, ${plural(counts.rules, 'rule')}`;
  return [...out, { stream: 'stdout', text: `${names.valid} is valid${warned}: ${declared}\n` }];
}
