/**
 * `netform acknowledge` as an operation: reads the files and the live server, checks that the
 * object's field (or the object as a whole, `*`) differs from the files now, and writes an
 * `acknowledged:` entry with the live value (or fingerprint) into the desired-state files with a
 * minimal edit (src/desired/acknowledged-edit.ts), atomically. Never writes to the server.
 */
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { acknowledgeableField, objectKey } from '../desired/acknowledged.js';
import {
  AcknowledgementEditError,
  withAcknowledgement,
  type AcknowledgementEntry,
} from '../desired/acknowledged-edit.js';
import { writeFileAtomically } from '../model/files.js';
import { formatInstant, parseInstant } from '../model/instant.js';
import { deviceKeyOfOwnerKey, userKey } from '../model/keys.js';
import type { DesiredState, SourceLocation } from '../model/state.js';
import { liveFingerprint, liveObjects, liveValue, showsDifference } from '../plan/lifecycle.js';
import type { Plan } from '../plan/types.js';
import { loadDesired, loaderFor, type DesiredInput } from './desired.js';
import { OpError } from './errors.js';
import { makePlan } from './plan.js';
import { readLiveState, type Connector } from './session.js';

export interface AcknowledgeRequest {
  /** A desired-state YAML file or folder. */
  file: string;
  input?: DesiredInput;
  connect: Connector;
  /** The object, as `show` and `--target` take it. */
  key: string;
  /** A field of it, or `*` (the default) for the object as a whole. */
  field?: string;
  until: string;
  reason: string;
  /** The instant `until` must lie after. */
  now: Date;
}

export interface AcknowledgeResult {
  /** The file written (as the files name it). */
  file: string;
  entry: AcknowledgementEntry;
  /** Whether an entry for the same key and field was replaced. */
  replaced: boolean;
}

export async function acknowledgeLive(request: AcknowledgeRequest): Promise<AcknowledgeResult> {
  const field = request.field ?? '*';
  const key = objectKey(request.key);
  if ('problem' in key) throw new OpError('request', `${request.key}: ${key.problem}`);
  if (!acknowledgeableField(key.key, field))
    throw new OpError('request', { code: 'field_not_acknowledgeable', key: key.key, field });
  const until = parseInstant(request.until);
  if (!until.ok) throw new OpError('request', { code: 'until_not_an_instant', problem: until.problem });
  if (until.instant.getTime() <= request.now.getTime())
    throw new OpError('request', {
      code: 'until_not_in_future',
      until: request.until,
      now: formatInstant(request.now),
    });
  if (request.reason.trim() === '') throw new OpError('request', { code: 'reason_missing' });
  if (request.file === '-' || /\.json$/i.test(request.file))
    throw new OpError('request', { code: 'acknowledge_writes_yaml', file: request.file });

  const desired = await loadDesired(request.file, {}, loaderFor(request.input));
  const session = await request.connect.open();
  let plan: Plan;
  let live;
  try {
    live = await readLiveState(session, { configuration: desired.configuration !== undefined });
    plan = await makePlan(desired, { instant: request.now }, session, {}, Promise.resolve(live));
  } finally {
    await session.close();
  }
  const object = liveObjects(live).get(key.key);
  if (!object) throw new OpError('request', { code: 'no_such_object', key: key.key });
  if (!showsDifference(plan, key.key, field))
    throw new OpError('request', { code: 'nothing_differs', key: key.key, field });

  const entry: AcknowledgementEntry = {
    key: key.key,
    field,
    ...(field === '*' ? { fingerprint: liveFingerprint(object.object) } : { value: liveValue(object, field) }),
    reason: request.reason,
    until: request.until,
  };
  const target = fileFor(desired, key.key, request.file);
  const text = readFileSync(target, 'utf8');
  let edited: { text: string; replaced: boolean };
  try {
    edited = withAcknowledgement(text, entry, (written) => {
      const normal = objectKey(written);
      return 'key' in normal && normal.key === key.key;
    });
  } catch (error) {
    if (error instanceof AcknowledgementEditError) throw new OpError('desired-state', `${target}: ${error.message}`);
    throw error;
  }
  writeFileAtomically(target, edited.text);
  return { file: target, entry, replaced: edited.replaced };
}

/**
 * The file the entry goes into: the one holding `acknowledged:` already, else the one declaring the
 * object (a device's or a rule's user), else the one declaring settings, else the first file.
 */
function fileFor(desired: DesiredState, key: string, given: string): string {
  const existing = desired.acknowledged?.[0]?.source?.file;
  if (existing) return existing;
  const owner = key.startsWith('user:')
    ? key.slice(5)
    : key.startsWith('device:')
      ? key.slice(7, key.lastIndexOf('/'))
      : key.slice(5, key.indexOf('|'));
  let source: SourceLocation | undefined;
  for (const user of desired.users) {
    const email = userKey(user.email);
    if (email !== owner) continue;
    source = user.devices.find((d) => `device:${deviceKeyOfOwnerKey(email, d.name)}` === key)?.source ?? user.source;
  }
  const file = source?.file ?? desired.settings.source?.file ?? desired.sources[0];
  if (file) return file;
  const path = resolve(given);
  if (statSync(path).isFile()) return path;
  throw new OpError('desired-state', { code: 'no_file_for_entry', file: given });
}
