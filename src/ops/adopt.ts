/**
 * Adopt as an operation: the live values of the named objects (or of every difference drift
 * reports) written into the desired-state files as small edits, so that `plan` is clean for them.
 * The files are read once, edited in memory over a few rounds, each round planned against one
 * reading of the server (src/desired/adopt/engine.ts), then written atomically, unless it is a
 * dry run. Never writes to the server.
 */
import { lstatSync, statSync } from 'node:fs';
import { constructCalls } from '../desired/adopt/cdktf.js';
import { unifiedDiff } from '../desired/adopt/diff.js';
import { AdoptEngine, mappingFor } from '../desired/adopt/engine.js';
import { AdoptFiles, type AdoptFile } from '../desired/adopt/files.js';
import { loadDesiredTexts } from '../desired/adopt/load.js';
import type { AdoptNote, AdoptSelection } from '../desired/adopt/types.js';
import { escapeFrom, readDesiredStateFile, realLocation, type Containment } from '../desired/containment.js';
import { desiredStateFilesOf } from '../desired/index.js';
import { formatDiagnostic } from '../model/diagnostic.js';
import { writeFileAtomically } from '../model/files.js';
import type { DesiredState, LiveState } from '../model/state.js';
import { checkPlannable, planChanges, PlanError, type Plan } from '../plan/index.js';
import { normalizeTarget, TargetError } from '../plan/target.js';
import { loadDesired, loaderFor, type DesiredInput } from './desired.js';
import { OpError } from './errors.js';
import { readLiveState, type Connector, type Session } from './session.js';

export interface AdoptRequest {
  /** The desired state: a file or a folder (`-` is refused: adopt writes files). */
  file: string;
  connect: Connector;
  /** Keys in the plan's notation; with `allDrift`, none. */
  keys: readonly string[];
  allDrift: boolean;
  /** Compute and show, write nothing. */
  dryRun: boolean;
  /** `--into FILE`: where new objects go that no declared user holds. */
  into?: string;
  removeDeleted: boolean;
  input?: DesiredInput;
  /** The run's instant (expiries). */
  now: Date;
}

/** One file adopt changed: its diff, and the text it now has (written unless a dry run). */
export interface AdoptedFile {
  /** As shown to people. */
  file: string;
  /** Where it is (or would be) written: a symlink's target inside the repository. */
  writtenTo: string;
  /** It is a symlink (written to its target). */
  link: boolean;
  created: boolean;
  diff: string;
  text: string;
}

export interface AdoptResult {
  notes: AdoptNote[];
  files: AdoptedFile[];
  /** A CDKTF stack: the construct calls to put into the program (nothing is edited). */
  cdktf?: string;
}

/** The selection of the request, its keys checked before anything is read. */
function selectionOf(request: Pick<AdoptRequest, 'keys' | 'allDrift'>): AdoptSelection {
  if (request.allDrift && request.keys.length > 0) throw new OpError('request', { code: 'adopt_objects_or_all_drift' });
  if (request.allDrift) return { all: true };
  if (request.keys.length === 0) throw new OpError('request', { code: 'adopt_names_nothing' });
  try {
    const ids = request.keys.map(normalizeTarget);
    return { all: false, ids: new Set(ids) };
  } catch (error) {
    if (error instanceof TargetError)
      throw new OpError('request', { code: 'target_refused', problem: error.problem, flag: false });
    throw error;
  }
}

/**
 * The files planned against the server as they are written: without `acknowledged:` applied (an
 * acknowledged difference is a difference to adopt; its entry goes in the same edit) and without
 * the expiries applied (the engine lists a grant expired at the run's instant and leaves it).
 */
function planOf(desired: DesiredState, live: LiveState, session: Session, only?: 'check'): Plan | undefined {
  const options = {
    server: session.url,
    createdAt: new Date().toISOString(),
    tokenUser: session.tokenUser,
    unreadableSecrets: 'report' as const,
  };
  try {
    if (only === 'check') {
      checkPlannable(desired, live, options);
      return undefined;
    }
    return planChanges(desired, live, options);
  } catch (error) {
    if (error instanceof PlanError) throw new OpError('plan', { code: 'cannot_plan', problems: error.problems });
    throw error;
  }
}

async function stateOf(files: AdoptFiles, input: DesiredInput | undefined, first: boolean): Promise<DesiredState> {
  const loaded = await loadDesiredTexts(files.list, input?.env ?? process.env);
  if (loaded.ok) return loaded.state;
  const problems = loaded.diagnostics.map(formatDiagnostic);
  // Adopt's own edits never make a file invalid; if they did, nothing is written and this says so.
  throw new OpError('desired-state', { code: first ? 'desired_state_errors' : 'adopt_edits_invalid', problems });
}

/** The files of the desired state at `path`, read within their containment. */
async function readFiles(
  path: string,
  into: string | undefined,
): Promise<{ files: AdoptFiles; within: Containment } | { cdktf: true }> {
  const target = await desiredStateFilesOf(path);
  if ('diagnostic' in target) throw new OpError('request', formatDiagnostic(target.diagnostic));
  if ('cdktf' in target) return { cdktf: true };
  const read: { path: string; text: string }[] = [];
  let used = 0;
  for (const file of target.files) {
    const bytes = await readDesiredStateFile(file, target.within, used);
    if ('problem' in bytes) throw new OpError('desired-state', `${file}: ${bytes.problem}`);
    used += bytes.bytes.length;
    read.push({ path: file, text: bytes.bytes.toString('utf8') });
  }
  if (into !== undefined) {
    const escape = escapeFrom(into, target.within);
    if (escape) throw new OpError('request', `--into ${into} ${escape}`);
  }
  const folder = statSync(path).isDirectory() ? path : null;
  return { files: new AdoptFiles(folder, read), within: target.within };
}

/** Where a changed file is written: itself, or a symlink's target when that lies inside the repository. */
function writeTarget(file: AdoptFile, within: Containment): { writtenTo: string; link: boolean } {
  let link: boolean;
  try {
    link = lstatSync(file.path).isSymbolicLink();
  } catch {
    link = false; // a new file
  }
  const escape = escapeFrom(file.path, within);
  if (escape) throw new OpError('export', { code: 'adopt_does_not_write', file: file.display, escape });
  return { writtenTo: link ? realLocation(file.path) : file.path, link };
}

export async function adoptFromServer(request: AdoptRequest): Promise<AdoptResult> {
  if (request.file === '-') throw new OpError('request', { code: 'adopt_edits_files' });
  const selection = selectionOf(request);
  const found = await readFiles(request.file, request.into);
  if ('cdktf' in found) return adoptCdktf(request, selection);
  const { files, within } = found;
  // The files' own errors first, before the server is read.
  const declared = await stateOf(files, request.input, true);
  const session = await request.connect.open();
  let live: LiveState;
  try {
    // `configuration:` is read when the files declare it, as plan reads it.
    live = await readLiveState(session, { configuration: declared.configuration !== undefined });
    const engine = new AdoptEngine(files, {
      selection,
      removeDeleted: request.removeDeleted,
      ...(request.into !== undefined ? { into: request.into } : {}),
      now: request.now,
    });
    // The files as read are the first round's: read once, before the server.
    let desired = declared;
    let edited = false;
    for (const phase of ['rename', 'adopt'] as const) {
      edited = engine.run(phase, desired, live, () => planOf(desired, live, session)!);
      if (edited) desired = await stateOf(files, request.input, false);
    }
    // The removals plan the files as edited so far; without them, the files the adopt round
    // edited are only checked to plan (the same refusal, no plan document).
    if (request.removeDeleted) {
      if (engine.run('remove', desired, live, () => planOf(desired, live, session)!))
        desired = await stateOf(files, request.input, false);
    } else if (edited) planOf(desired, live, session, 'check');
    engine.explainUntouched(desired, live);
    const adopted = files.changedFiles.map((file) => ({
      file: file.display,
      ...writeTarget(file, within),
      created: file.original === null,
      diff: unifiedDiff(
        file.original ?? '',
        file.text,
        file.original === null ? '/dev/null' : `a/${file.display}`,
        `b/${file.display}`,
      ),
      text: file.text,
    }));
    if (!request.dryRun) for (const file of adopted) writeFileAtomically(file.writtenTo, file.text);
    return { notes: engine.notes, files: adopted };
  } finally {
    await session.close();
  }
}

async function adoptCdktf(request: AdoptRequest, selection: AdoptSelection): Promise<AdoptResult> {
  const desired = await loadDesired(request.file, {}, loaderFor(request.input));
  const session = await request.connect.open();
  try {
    const live = await readLiveState(session, { configuration: desired.configuration !== undefined });
    const plan = planOf(desired, live, session)!;
    const selected = (id: string) =>
      selection.all ||
      selection.ids.has(id) ||
      [...selection.ids].some(
        (s) =>
          s.startsWith('user:') && (id.startsWith(`device:${s.slice(5)}/`) || id.startsWith(`rule:${s.slice(5)}|`)),
      );
    return { notes: [], files: [], cdktf: constructCalls(plan, live, selected, mappingFor(desired)) };
  } finally {
    await session.close();
  }
}
