/**
 * Merging the documents of a folder into one DesiredState. Users, rules and absent entries are
 * concatenated in file order (checkDesiredState reports anything declared twice, naming both
 * places). Settings are repository-wide: they may be declared in one document only, or repeated
 * identically (so is `configuration`); two different `settings` blocks are an error, because which one wins would be a
 * guess and a reader of either file would be misled.
 */
import { isDeepStrictEqual } from 'node:util';
import { defaultSettings, type DesiredState, type SourceLocation } from '../model/state.js';
import type { DocumentDeclarations } from './document.js';
import type { Diagnostic } from './types.js';

export function mergeDeclarations(
  documents: DocumentDeclarations[],
  sources: string[],
): { state: DesiredState; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const state: DesiredState = {
    settings: defaultSettings(),
    users: [],
    rules: [],
    absent: { users: [], devices: [] },
    sources,
  };
  const versionFrom = documents[0]?.version;
  if (versionFrom) state.version = versionFrom.value;
  let settingsFrom: DocumentDeclarations['settings'];
  let configurationFrom: DocumentDeclarations['configuration'];
  for (const document of documents) {
    if (versionFrom && document.version.value !== versionFrom.value)
      diagnostics.push(mixedVersions(versionFrom, document.version));
    if (document.settings) {
      if (!settingsFrom) {
        settingsFrom = document.settings;
        state.settings = document.settings.value;
      } else if (!isDeepStrictEqual(settingsFrom.raw, document.settings.raw)) {
        const first = settingsFrom.source;
        const here = document.settings.source;
        diagnostics.push({
          file: here.file,
          line: here.line,
          column: here.column,
          path: 'settings',
          message: `settings are repository-wide and already declared differently at ${first.file}:${first.line}:${first.column}; declare them in one file`,
        });
      }
    }
    if (document.configuration) {
      if (!configurationFrom) {
        configurationFrom = document.configuration;
        state.configuration = document.configuration.value;
      } else if (!isDeepStrictEqual(configurationFrom.raw, document.configuration.raw)) {
        diagnostics.push(
          declaredTwice('configuration', configurationFrom.value.source, document.configuration.value.source),
        );
      }
    }
    // Loops, not push(...list): a spread passes each entry as an argument, and a list of some
    // 120,000 entries overflows the call stack.
    for (const item of document.users) state.users.push(item);
    for (const item of document.rules) state.rules.push(item);
    for (const item of document.absentUsers) state.absent.users.push(item);
    for (const item of document.absentDevices) state.absent.devices.push(item);
    for (const item of document.acknowledged ?? []) (state.acknowledged ??= []).push(item);
    for (const item of document.forget ?? []) (state.forget ??= []).push(item);
    if (document.tests.length > 0) {
      const tests = (state.tests ??= []);
      for (const item of document.tests) tests.push(item);
    }
  }
  return { state, diagnostics };
}

/** Two files of one repository with different format versions: which meaning holds would be a guess. */
function mixedVersions(first: DocumentDeclarations['version'], here: DocumentDeclarations['version']): Diagnostic {
  const at = (v: DocumentDeclarations['version']) => `${v.source.file}:${v.source.line}:${v.source.column}`;
  return {
    file: here.source.file,
    line: here.source.line,
    column: here.source.column,
    path: 'version',
    message:
      `version ${here.value} here, but version ${first.value} at ${at(first)}: every file of a repository has the same version ` +
      '(version 2 once its left-out fields have been reviewed: docs/managed-fields.md)',
  };
}

/** The same repository-wide block declared differently in a second place. */
function declaredTwice(what: string, first: SourceLocation | undefined, here: SourceLocation | undefined): Diagnostic {
  const firstAt = first ? `${first.file}:${first.line}:${first.column}` : 'another file';
  return {
    ...(here ? { file: here.file, line: here.line, column: here.column } : {}),
    path: what,
    message: `${what} is repository-wide and already declared differently at ${firstAt}; declare it in one file`,
  };
}
