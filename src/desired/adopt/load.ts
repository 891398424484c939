/**
 * The desired state read from texts held in memory (adopt's files between its rounds), through the
 * same reading pipeline as files on disk: each text under the name the loader gives its file, so
 * that source locations name the same files.
 */
import { readDocuments } from '../pipeline.js';
import type { ParsedDocument } from '../positions.js';
import type { Environment } from '../secrets.js';
import type { Diagnostic, LoadResult } from '../types.js';
import { parseYamlInto } from '../yaml.js';

export async function loadDesiredTexts(
  files: readonly { display: string; text: string }[],
  env: Environment,
): Promise<LoadResult> {
  const documents: ParsedDocument[] = [];
  const diagnostics: Diagnostic[] = [];
  for (const file of files) await parseYamlInto(file.text, file.display, documents, diagnostics);
  return readDocuments(
    documents,
    files.map((f) => f.display),
    env,
    diagnostics,
    { unparsed: true },
  );
}
