/**
 * Show as an operation: live objects in the desired-state YAML format (as `kubectl get -o yaml`
 * shows live objects in the format they are written in), through export's mapping. Without keys,
 * a whole document of everything; with keys (`user:EMAIL`, `device:EMAIL/NAME`, `rule:KEY`, as
 * in plans), the YAML fragment of each of those objects, with no header, indented to paste into
 * a file (or, with `document`, a whole document of them and the user each belongs to). Never
 * writes anything.
 */
import { exportDesiredState, exportFragments } from '../desired/export/index.js';
import type { NamedObject } from '../desired/export/types.js';
import type { LiveState } from '../model/state.js';
import { indexLiveState } from '../plan/live-index.js';
import { liveKeyIds, nearestKey, normalizeTarget, TargetError } from '../plan/target.js';
import { OpError } from './errors.js';
import { exportFailed } from './export.js';
import { readLiveState, type Connector } from './session.js';

export interface ShowRequest {
  connect: Connector;
  /** Keys in the plan's notation; none: everything. */
  keys: readonly string[];
  /** What the `# yaml-language-server: $schema=` comment points at. */
  schemaRef: string;
  /** A whole document (header, settings) even for keys; without keys it always is one. */
  document?: boolean;
}

/** The objects as one desired-state YAML document, or as fragments (keys without `document`). */
export async function showLive(request: ShowRequest): Promise<string> {
  let wanted: string[];
  try {
    wanted = request.keys.map(normalizeTarget);
  } catch (error) {
    if (error instanceof TargetError)
      throw new OpError('request', { code: 'target_refused', problem: error.problem, flag: false });
    throw error;
  }
  if (wanted.includes('configuration')) throw new OpError('request', { code: 'show_configuration' });
  const session = await request.connect.open();
  let live: LiveState;
  try {
    live = await readLiveState(session);
  } finally {
    await session.close();
  }
  const { selected, named } = wanted.length > 0 ? select(live, wanted) : { selected: live, named: [] };
  try {
    if (named.length > 0 && request.document !== true)
      return exportFragments(selected, named, { split: false, schemaRef: request.schemaRef });
    const { files } = exportDesiredState(selected, { split: false, schemaRef: request.schemaRef, server: session.url });
    return files[0]!.content;
  } catch (error) {
    throw exportFailed(error);
  }
}

/** The objects named by `ids` (change-id notation), with the user each belongs to. */
function select(live: LiveState, ids: string[]): { selected: LiveState; named: NamedObject[] } {
  const index = indexLiveState(live);
  const users = new Set<string>();
  const devices = new Set<string>();
  const rules = new Set<string>();
  const missing: string[] = [];
  const named: NamedObject[] = [];
  for (const id of ids) {
    const key = id.slice(id.indexOf(':') + 1);
    if (id.startsWith('user:')) {
      const user = index.usersByKey.get(key);
      if (!user) missing.push(id);
      else {
        named.push({ kind: 'user', id: user.id });
        users.add(user.id);
        for (const d of index.devicesByUserId.get(user.id) ?? []) devices.add(d.id);
        for (const r of index.rulesByUserId.get(user.id) ?? []) rules.add(r.id);
      }
    } else if (id.startsWith('device:')) {
      const device = index.devicesByKey.get(key);
      if (!device) missing.push(id);
      else {
        named.push({ kind: 'device', id: device.id });
        devices.add(device.id);
        users.add(device.user_id);
      }
    } else {
      const rule = index.rulesByKey.get(key);
      if (!rule) missing.push(id);
      else {
        named.push({ kind: 'rule', id: rule.id });
        rules.add(rule.id);
        if (rule.user_id) users.add(rule.user_id);
      }
    }
  }
  if (missing.length > 0) {
    // The nearest live key of each, as a hint (src/plan/target.ts).
    const known = liveKeyIds(index);
    const keys = missing.map((key) => ({ key, near: nearestKey(key, known) ?? null }));
    throw new OpError('request', { code: 'server_has_no', keys });
  }
  const selected = {
    users: live.users.filter((u) => users.has(u.id)),
    devices: live.devices.filter((d) => devices.has(d.id)),
    rules: live.rules.filter((r) => rules.has(r.id)),
  };
  return { selected, named };
}
