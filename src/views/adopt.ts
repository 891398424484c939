/**
 * What `netform adopt` says: the diff of the files (standard output), and one line per object
 * (standard error): what was written where, and what was left and why. Every value from the files
 * or the server is made inert.
 */
import type { AdoptNote, Placement } from '../desired/adopt/types.js';
import type { AdoptedFile } from '../ops/adopt.js';
import { inertMessage, inertText, markdownFence } from './escape.js';

/** The sentence for a changed secret adopt never writes. */
export const SECRET_REFUSAL = "adopt cannot write secrets: set the reference's value";

const PLACEMENT: Record<Placement, string> = {
  'user-file': 'the file declaring its user',
  into: 'the file --into names',
  'rules-file': 'the file declaring global rules',
  split: 'the file export --split writes it to',
  single: 'the file named with -f',
};

/** `device:alice@example.com/laptop` -> `device alice@example.com/laptop`. */
function shown(id: string): string {
  const colon = id.indexOf(':');
  return inertText(colon === -1 ? id : `${id.slice(0, colon)} ${id.slice(colon + 1)}`);
}

function noteLine(note: AdoptNote): string {
  const id = shown(note.id);
  switch (note.kind) {
    case 'updated':
      return `  ~ ${id}: ${note.fields.map(inertText).join(', ')} (${inertText(note.file)})`;
    case 'added':
      return `  + ${id}: into ${inertText(note.file)}${note.created ? ', a new file' : ''} (${PLACEMENT[note.placement]})`;
    case 'renamed':
      return `  ~ ${id}: renamed by hand from ${inertText(note.from)}, written as the new email with renamed_from (${inertText(note.file)})`;
    case 'removed':
      return `  - ${id}: deleted from the server by hand, removed from ${inertText(note.file)} with its comments`;
    case 'acknowledgement-removed':
      return `  - ${id}: its acknowledged: entry removed (${inertText(note.file)}), the difference is declared now`;
    case 'secret':
      return `  ${id}: ${inertText(note.field)} differs: ${SECRET_REFUSAL}`;
    case 'deleted':
      return `  ${id}: deleted from the server by hand, still declared in ${inertText(note.file)}: left (--remove-deleted removes it)`;
    case 'protected':
      return `  ${id}: protected (settings.protect): adopt does not write it`;
    case 'outside-manage':
      return `  ${id}: outside settings.manage: adopt does not write it`;
    case 'expired':
      return `  ${id}: expired ${inertText(note.since)}: renew it by editing \`expires\``;
    case 'matches':
      return `  ${id}: nothing to adopt, the files declare it as the server holds it`;
    case 'unknown':
      return `  ${id}: neither the server nor the files have it`;
    case 'not-adoptable':
      return `  ${id}: adopt does not write ${inertText(note.what)}`;
  }
}

const WRITTEN = new Set<AdoptNote['kind']>(['updated', 'added', 'renamed', 'removed', 'acknowledgement-removed']);

/** Standard error's report: what was written (or would be, in a dry run), then what was left. */
export function adoptReport(notes: readonly AdoptNote[], files: readonly AdoptedFile[], dryRun: boolean): string {
  const written = notes.filter((n) => WRITTEN.has(n.kind));
  const left = notes.filter((n) => !WRITTEN.has(n.kind));
  const lines: string[] = [];
  if (files.length === 0) lines.push('adopt: no file changed');
  else {
    const names = files.map((f) => inertText(f.file)).join(', ');
    const links = files.filter((f) => f.link);
    lines.push(
      `adopt: ${dryRun ? 'would write (dry run, nothing written)' : 'wrote'} ${files.length} file(s): ${names}`,
    );
    for (const link of links)
      lines.push(`  ${inertText(link.file)} is a symlink: written to ${inertText(link.writtenTo)}`);
  }
  for (const note of written) lines.push(noteLine(note));
  if (left.length > 0) {
    lines.push('not adopted:');
    for (const note of left) lines.push(noteLine(note));
  }
  if (files.length > 0 && !dryRun) lines.push('next: review the diff, commit it, and check with `netform plan`');
  return `${lines.join('\n')}\n`;
}

/** Standard output: the unified diff of every changed file. */
export function adoptDiff(files: readonly AdoptedFile[]): string {
  return files.map((f) => inertMessage(f.diff)).join('');
}

/** Standard output for a CDKTF stack: the construct calls, with a line saying nothing was edited. */
export function adoptCdktfText(calls: string): string {
  if (calls === '') return '// nothing to adopt\n';
  return `// A CDKTF stack is the output of a program: adopt edits nothing. Put these constructs into the\n// stack's program (netform/cdktf's User, Device and Rule), then synthesize and plan again.\n${inertMessage(calls)}`;
}

/**
 * The commit message of `drift --adopt-branch`: a title line, then a markdown body (a pull
 * request's description) holding adopt's report in a code block, where nothing is markup.
 */
export function adoptCommitMessage(notes: readonly AdoptNote[], files: readonly AdoptedFile[], server: string): string {
  const written = notes.filter((n) => WRITTEN.has(n.kind)).length;
  const title = `netform: adopt ${written} hand change${written === 1 ? '' : 's'} from ${inertText(server)}`;
  const report = adoptReport(notes, files, true)
    .split('\n')
    .filter((line) => !line.startsWith('adopt: would write'))
    .join('\n');
  const fence = markdownFence(report);
  return `${title}\n\nChanges made on the server by hand, written into the desired-state files by \`netform drift --adopt-branch\`. Review them line by line: merging declares them; closing this leaves the next apply to undo them.\n\n${fence}\n${report}${fence}\n`;
}
