/**
 * `netform export`: the live server as desired-state YAML (docs/netform.md section 1.1), pure.
 * What is read of the server and in which order is grouping.ts; the YAML values, mapping.ts; which
 * files, files.ts; their text, yaml.ts.
 */
import type { LiveState } from '../../model/state.js';
import { render } from './files.js';
import { Grouping } from './grouping.js';
import { ruleToYaml, userToYaml, deviceToYaml, type Mapping, type Plain } from './mapping.js';
import { ExportError, type ExportOptions, type ExportResult, type LiveLists, type NamedObject } from './types.js';
import { renderExportDocument } from './yaml.js';

export function exportDesiredState(live: LiveState, options: ExportOptions): ExportResult {
  const grouping = new Grouping();
  grouping.addUsers(live.users);
  grouping.addDevices(live.devices);
  grouping.addRules(live.rules);
  return render(grouping, live.configuration, options);
}

/**
 * The YAML fragments of the named objects, in the order named, with no header: each a list item
 * indented as it stands in an exported file, to paste under `users:` (a user, with its devices and
 * rules), a user's `devices:` or `rules:` (six spaces), or the top-level `rules:` (a global rule).
 * The same mapping and writer as export, so a value reads as export writes it.
 */
export function exportFragments(live: LiveState, named: readonly NamedObject[], options: ExportOptions): string {
  const grouping = new Grouping();
  grouping.addUsers(live.users);
  grouping.addDevices(live.devices);
  grouping.addRules(live.rules);
  const { entries, globalRules } = grouping.result();
  const mapping: Mapping = {
    pinAddresses: options.addresses ?? true,
    explicitDefaults: options.explicitDefaults ?? false,
  };
  const out: string[] = [];
  const leftOut: string[] = [];
  for (const { kind, id } of named) {
    const before = out.length;
    if (kind === 'user') {
      const entry = entries.find((e) => e.user.id === id);
      if (entry) out.push(fragment('users', userToYaml(entry, mapping), ''));
    } else if (kind === 'device') {
      const device = entries.flatMap((e) => e.devices).find((d) => d.id === id);
      if (device) out.push(fragment('devices', deviceToYaml(device, mapping), '    '));
    } else {
      const global = globalRules.find((r) => r.id === id);
      const own = entries.flatMap((e) => e.rules).find((r) => r.id === id);
      if (global) out.push(fragment('rules', ruleToYaml(global), ''));
      else if (own) out.push(fragment('rules', ruleToYaml(own), '    '));
    }
    if (out.length === before) leftOut.push(`${kind} ${id}: no desired state can declare it as the server holds it`);
  }
  if (leftOut.length > 0) throw new ExportError(leftOut);
  return out.join('');
}

/** One list item under `key`, as export writes it, its lines indented further by `indent`. */
function fragment(key: string, item: Plain, indent: string): string {
  const text = renderExportDocument('', { [key]: [item] }).slice(key.length + 2);
  return indent === '' ? text : text.replace(/^(?=.)/gm, indent);
}

/**
 * exportDesiredState, on the lists as they arrive: the users are indexed while the devices and
 * rules are still on their way, and each of those is grouped by owner and sorted as soon as it
 * is there (a server sends its lists one after the other). The same result.
 */
export async function exportLiveState(lists: LiveLists, options: ExportOptions): Promise<ExportResult> {
  const grouping = new Grouping();
  const users = lists.users.then((list) => grouping.addUsers(list));
  const devices = Promise.all([users, lists.devices]).then(([, list]) => grouping.addDevices(list));
  const rules = Promise.all([users, lists.rules]).then(([, list]) => grouping.addRules(list));
  const [, , , configuration] = await Promise.all([users, devices, rules, lists.configuration]);
  return render(grouping, configuration, options);
}
