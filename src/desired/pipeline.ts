/**
 * The one reading pipeline of the desired state. Whatever a front end read (YAML files, or a CDKTF
 * stack translated into the same document shape), its documents go through the same steps: the
 * schema check, the document reader, the merge of a folder's documents, and the domain checks.
 */
import { checkDesiredState } from './check/state.js';
import { readDocument, type DocumentDeclarations } from './document.js';
import { sortDiagnostics } from './files.js';
import { mergeDeclarations } from './merge.js';
import type { ParsedDocument } from './positions.js';
import { checkSchema } from './schema.js';
import type { Environment } from './secrets.js';
import type { Diagnostic, LoadResult } from './types.js';

/** The line saying that the checks across files were not made (a file could not be parsed). */
export const SKIPPED_ACROSS_FILES =
  'checks across files (duplicates, scope, absent, renames, users named by tests) were skipped because a file could not be read or parsed: fix it first';

/** What reading one parsed document gave: its problems, and its declarations unless its shape is wrong. */
export interface DocumentRead {
  diagnostics: Diagnostic[];
  warnings: Diagnostic[];
  declarations?: DocumentDeclarations;
}

/**
 * The schema check and the reader for one document: everything of the pipeline that needs only
 * this document.
 */
export function readOneDocument(document: ParsedDocument, env: Environment): DocumentRead {
  const schema = checkSchema(document);
  // A document of another version or shape is not read further: its other errors would be noise.
  if (schema.faulty.has('') || schema.faulty.has('version')) {
    const diagnostics = schema.diagnostics.filter((item) => item.path === undefined || item.path === 'version');
    return { diagnostics, warnings: [] };
  }
  const read = readDocument(document, schema, env);
  const diagnostics = [...schema.diagnostics];
  for (const item of read.diagnostics) diagnostics.push(item);
  return { diagnostics, warnings: read.warnings, declarations: read };
}

/**
 * Reads parsed documents into one checked DesiredState. `diagnostics` are what the front end found
 * already (syntax, unreadable files, Terraform-level problems); `files` are the files read, in order.
 * A secret that cannot be read now is a warning (secrets are read where they are used, not at load).
 * `documents` is consumed: each entry is cleared once read, so that a large file's parse tree can
 * be freed before the checks of the whole state.
 */
export function readDocuments(
  documents: ParsedDocument[],
  files: string[],
  env: Environment,
  diagnostics: Diagnostic[] = [],
  options: FinishOptions = {},
): LoadResult {
  const reads: DocumentRead[] = [];
  for (let i = 0; i < documents.length; i++) {
    const document = documents[i]!;
    // The parsed document is not needed once read: let it go before the checks of the whole state.
    documents[i] = undefined as unknown as ParsedDocument;
    reads.push(readOneDocument(document, env));
  }
  return finishReading(reads, files, diagnostics, options);
}

export interface FinishOptions {
  /**
   * The front end's `diagnostics` say that files could not be parsed (YAML syntax, unreadable
   * files): they come first, and the checks across files are skipped, since what the missing
   * files declare would make them blame the wrong place.
   */
  unparsed?: boolean;
}

/**
 * The documents' reads, in reading order, merged and checked as one state.
 */
export function finishReading(
  reads: DocumentRead[],
  files: string[],
  diagnostics: Diagnostic[],
  options: FinishOptions = {},
): LoadResult {
  const unparsed = options.unparsed === true && diagnostics.length > 0;
  const all = unparsed ? [] : [...diagnostics];
  const warnings: Diagnostic[] = [];
  const declarations: DocumentDeclarations[] = [];
  for (const read of reads) {
    for (const item of read.diagnostics) all.push(item);
    for (const item of read.warnings) warnings.push(item);
    if (read.declarations) declarations.push(read.declarations);
  }
  const merged = mergeDeclarations(declarations, files);
  for (const item of merged.diagnostics) all.push(item);
  for (const item of checkDesiredState(merged.state, { acrossFiles: !unparsed })) all.push(item);
  const sortedWarnings = warnings.length > 0 ? { warnings: sortDiagnostics(warnings, files) } : {};
  if (unparsed) {
    // One mistake, one error, first: the files that could not be parsed, then the rest, then why
    // some checks were not made.
    const ordered = [
      ...sortDiagnostics(diagnostics, files),
      ...sortDiagnostics(all, files),
      ...(declarations.length > 0 ? [{ message: SKIPPED_ACROSS_FILES }] : []),
    ];
    return { ok: false, diagnostics: ordered, ...sortedWarnings };
  }
  if (all.length > 0) return { ok: false, diagnostics: sortDiagnostics(all, files), ...sortedWarnings };
  return { ok: true, state: merged.state, ...sortedWarnings };
}
