/** Problems found in the desired state, as people read them and as GitHub Actions annotates them. */
import type { Diagnostic } from '../desired/types.js';

/** `file:line:column: path: message` (as much of the location as is known). */
export function formatDiagnostic(d: Diagnostic): string {
  const where = d.file
    ? [d.file, d.line, d.line !== undefined ? d.column : undefined].filter((p) => p !== undefined).join(':')
    : undefined;
  return [where, d.path, d.message].filter((part) => part !== undefined && part !== '').join(': ');
}

/** GitHub Actions workflow-command escaping: data and property values differ. */
function escapeData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

export function githubAnnotation(d: Diagnostic, level: 'error' | 'warning' = 'error'): string {
  const properties = [
    d.file !== undefined ? `file=${escapeProperty(d.file)}` : undefined,
    d.line !== undefined ? `line=${d.line}` : undefined,
    d.column !== undefined ? `col=${d.column}` : undefined,
  ].filter((p) => p !== undefined);
  const message = d.path ? `${d.path}: ${d.message}` : d.message;
  return `::${level}${properties.length > 0 ? ` ${properties.join(',')}` : ''}::${escapeData(message)}`;
}
