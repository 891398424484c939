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
 * A secret that cannot be read now is a warning (secrets are read where they are used: W3.6).
 * `documents` is consumed: each entry is cleared once read, so that a large file's parse tree can
 * be freed before the checks of the whole state.
 */
export function readDocuments(
  documents: ParsedDocument[],
  files: string[],
  env: Environment,
  diagnostics: Diagnostic[] = [],
): LoadResult {
  const reads: DocumentRead[] = [];
  for (let i = 0; i < documents.length; i++) {
    const document = documents[i]!;
    // The parsed document is not needed once read: let it go before the checks of the whole state.
    documents[i] = undefined as unknown as ParsedDocument;
    reads.push(readOneDocument(document, env));
  }
  return finishReading(reads, files, diagnostics);
}

/**
 * The documents' reads, in reading order, merged and checked as one state.
 */
export function finishReading(reads: DocumentRead[], files: string[], diagnostics: Diagnostic[]): LoadResult {
  const all = [...diagnostics];
  const warnings: Diagnostic[] = [];
  const declarations: DocumentDeclarations[] = [];
  for (const read of reads) {
    for (const item of read.diagnostics) all.push(item);
    for (const item of read.warnings) warnings.push(item);
    if (read.declarations) declarations.push(read.declarations);
  }
  const merged = mergeDeclarations(declarations, files);
  for (const item of merged.diagnostics) all.push(item);
  for (const item of checkDesiredState(merged.state)) all.push(item);
  const sortedWarnings = warnings.length > 0 ? { warnings: sortDiagnostics(warnings, files) } : {};
  if (all.length > 0) return { ok: false, diagnostics: sortDiagnostics(all, files), ...sortedWarnings };
  return { ok: true, state: merged.state, ...sortedWarnings };
}
