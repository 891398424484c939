/**
 * Loading a synthesized CDK for Terraform stack (`cdk.tf.json`, or a folder holding one): the file
 * found and read within its containment, refused when it nests too deep or is not JSON, then
 * translated (translator.ts) and read by the one pipeline the YAML files go through.
 */
import { lstat, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseTree, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { desiredStateContainment, escapeFrom, readDesiredStateFile, type Containment } from '../containment.js';
import { CDKTF_STACK_FILE, displayPath } from '../files.js';
import { readDocuments } from '../pipeline.js';
import { columnAt, lineAt, lineStartsOf } from '../positions.js';
import type { LoadOptions, LoadResult } from '../types.js';
import { JsonPositions } from './json-positions.js';
import { isObject } from './site.js';
import { StackTranslator } from './translator.js';

/** The stack file a path names (the file itself, or the cdk.tf.json in a folder), and where it must lie. */
async function stackFileOf(path: string): Promise<{ file: string; within: Containment } | { error: string }> {
  try {
    const info = await stat(path);
    if (!info.isDirectory()) return { file: path, within: desiredStateContainment(path, false) };
  } catch {
    return { error: 'no such file or folder' };
  }
  const within = desiredStateContainment(path, true);
  const escape = escapeFrom(path, within);
  if (escape) return { error: `${escape}; it is not read` };
  const file = join(path, CDKTF_STACK_FILE);
  try {
    await lstat(file);
    return { file, within };
  } catch {
    return {
      error: `holds no ${CDKTF_STACK_FILE}; point at a synthesized stack such as cdktf.out/stacks/NAME (run your CDKTF app first)`,
    };
  }
}

/**
 * How deep objects and arrays may nest in a stack file. A synthesized stack nests a handful of
 * levels; the JSON scanner that locates values (and the readers after it) recurse once per level,
 * so a deeper file is refused, at the bracket that goes too deep, before any of them runs.
 */
export const CDKTF_MAX_DEPTH = 1000;

/** The offset of the first `{` or `[` nested deeper than CDKTF_MAX_DEPTH (strings skipped), or -1. */
function tooDeepAt(text: string): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > CDKTF_MAX_DEPTH) return i;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return -1;
}

/** Where and what the first syntax error of a text JSON.parse refused is, as far as the JSON scanner can tell. */
function jsonSyntaxError(text: string): { line?: number; column?: number; problem: string } {
  const errors: ParseError[] = [];
  parseTree(text, errors, { disallowComments: true, allowTrailingComma: false });
  const first = errors[0];
  if (!first) return { problem: 'is not valid JSON' };
  // "PropertyNameExpected" -> "property name expected"
  const problem = printParseErrorCode(first.error)
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase();
  return { ...new JsonPositions(text).position(first.offset), problem: `is not valid JSON: ${problem}` };
}

/**
 * Reads a synthesized stack (a cdk.tf.json file, or a folder holding one) into a DesiredState:
 * translated, then read by the one pipeline (pipeline.ts) the YAML files go through.
 */
export async function loadCdktfStack(path: string, options: LoadOptions = {}): Promise<LoadResult> {
  const env = options.env ?? process.env;
  const located = await stackFileOf(path);
  if ('error' in located) return { ok: false, diagnostics: [{ file: displayPath(path), message: located.error }] };
  const shown = displayPath(located.file);

  const read = await readDesiredStateFile(located.file, located.within, 0);
  if ('problem' in read) return { ok: false, diagnostics: [{ file: shown, message: read.problem }] };
  const text = read.bytes.toString('utf8');
  const deep = tooDeepAt(text);
  if (deep !== -1) {
    const lines = { lineStarts: lineStartsOf(text) };
    const line = lineAt(lines, deep);
    return {
      ok: false,
      diagnostics: [
        {
          file: shown,
          line,
          column: columnAt(lines, deep, line),
          message: `nests objects and arrays more than ${CDKTF_MAX_DEPTH} levels deep, which netform does not read (a synthesized stack needs a handful)`,
        },
      ],
    };
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    // JSON.parse's own message quotes the source, which may hold a secret: say where and what only.
    const { problem, ...at } = jsonSyntaxError(text);
    return {
      ok: false,
      diagnostics: [
        { file: shown, ...at, message: `${problem} (a synthesized stack is written by cdktf synth or app.synth())` },
      ],
    };
  }
  if (!isObject(document))
    return {
      ok: false,
      diagnostics: [
        { file: shown, line: 1, column: 1, message: 'must be a JSON object (a Terraform JSON configuration)' },
      ],
    };

  const translator = new StackTranslator(shown, document, new JsonPositions(text), env);
  translator.translate();
  return readDocuments([translator.parsedDocument()], [shown], env, translator.diagnostics);
}
