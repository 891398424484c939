/**
 * A problem found in the desired state, and its one-line form: shared by the reader, the checks,
 * the workflows' errors and the views.
 */
import { inertText, inertWorkflowCommands } from './inert.js';

/** One problem found in the desired state, pointing at the value at fault where it can. */
export interface Diagnostic {
  message: string;
  file?: string;
  /** 1-based. */
  line?: number;
  /** 1-based. */
  column?: number;
  /** Where in the document: `users[0].devices[1].mtu`, or a CDKTF `resource.attribute`. */
  path?: string;
}

/** `file:line:column: path: message` (as much of the location as is known). */
export function formatDiagnostic(d: Diagnostic): string {
  const where = d.file
    ? [d.file, d.line, d.line !== undefined ? d.column : undefined].filter((p) => p !== undefined).join(':')
    : undefined;
  // Inert: a file name, key or quoted value cannot break the line, move the cursor, or begin a workflow command.
  const line = inertText([where, d.path, d.message].filter((part) => part !== undefined && part !== '').join(': '));
  return inertWorkflowCommands(line, { lineStarts: true });
}
