/**
 * Which files export writes and what each holds: one document, or one file per user plus the
 * global rules and the configuration; each file's name and its header comment.
 */
import { createHash } from 'node:crypto';
import type { ApiConfiguration } from '../../model/configuration.js';
import { userKey } from '../../model/keys.js';
import type { Grouping } from './grouping.js';
import { configurationToYaml, ruleToYaml, userToYaml, type Mapping, type Plain } from './mapping.js';
import type { ExportedFile, ExportOptions, ExportResult } from './types.js';
import { renderExportDocument } from './yaml.js';

export const SINGLE_FILE_NAME = 'netform.yaml';
export const GLOBAL_RULES_FILE_NAME = 'global-rules.yaml';
export const CONFIGURATION_FILE_NAME = 'configuration.yaml';

/** The files of an export: the grouped live objects as YAML, in one document or one file per user (`split`). */
export function render(grouping: Grouping, liveConfiguration: ApiConfiguration | undefined, options: ExportOptions) {
  const { entries, globalRules, leftOut } = grouping.result();
  const counts = grouping.counts;
  const mapping: Mapping = {
    pinAddresses: options.addresses ?? true,
    explicitDefaults: options.explicitDefaults ?? false,
  };
  const header = headerComment(options, counts, mapping, leftOut);
  const settings = exportedSettings(options);

  const configuration = liveConfiguration ? configurationToYaml(liveConfiguration, mapping) : undefined;
  if (!options.split) {
    const body: Plain = {
      version: 1,
      ...settings,
      ...(configuration ? { configuration } : {}),
      users: entries.map((e) => userToYaml(e, mapping)),
      rules: globalRules.map(ruleToYaml),
    };
    return { files: [{ name: SINGLE_FILE_NAME, content: renderExportDocument(header, body) }], counts, leftOut };
  }

  const files: ExportedFile[] = [];
  const taken = new Set<string>([GLOBAL_RULES_FILE_NAME, CONFIGURATION_FILE_NAME]);
  for (const entry of entries) {
    const name = uniqueName(userFileName(entry.user.email), taken);
    files.push({
      name,
      content: renderExportDocument(header, { version: 1, users: [userToYaml(entry, mapping)] }),
    });
  }
  // The settings go once, with the global rules (settings of several files are merged).
  files.push({
    name: GLOBAL_RULES_FILE_NAME,
    content: renderExportDocument(header, { version: 1, ...settings, rules: globalRules.map(ruleToYaml) }),
  });
  if (configuration) {
    files.push({
      name: CONFIGURATION_FILE_NAME,
      content: renderExportDocument(header, { version: 1, configuration }),
    });
  }
  return { files, counts, leftOut };
}

/** `settings: { prune: true }` unless the export was asked not to own the server. */
function exportedSettings(options: ExportOptions): Plain {
  return options.prune === false ? {} : { settings: { prune: true } };
}

function headerComment(
  options: ExportOptions,
  counts: ExportResult['counts'],
  mapping: Mapping,
  leftOut: string[],
): string {
  const server = options.server ? ` from ${withoutCredentials(options.server)}` : '';
  const lines = [
    `yaml-language-server: $schema=${options.schemaRef}`,
    `Exported by \`netform export\`${server}: ${describeCounts(counts)}.`,
    'Review it, commit it, then `netform plan` shows no changes until the files or the server change.',
    options.prune === false
      ? 'Prune is off (exported with --no-prune): a live object that no file declares is listed by plan and left alone.'
      : '`settings: { prune: true }`: this repository owns the server, so apply deletes what no file declares (export with --no-prune to leave such objects alone).',
    'What is managed:',
    '- Passwords cannot be read from the server and are not managed. To set one from now on, give',
    '  the user `password: { env: NAME }` (sent on create, and on `apply --rotate-passwords`).',
    '- Preshared keys are left out on purpose, so each stays as it is on the server. To manage one,',
    '  give its device `preshared_key: { env: NAME }` or `preshared_key: { file: secrets/NAME.psk }`',
    '  (a file holding the base64 key, relative to this file; keep such files out of git).',
    "- Fields left out are managed at their default: a user's role is `unprivileged`, and a device's",
    '  allowed_ips, dns, endpoint, mtu and persistent_keepalive follow the server (`use_default_<x>: true`),',
    '  so a hand promotion or a hand-set value shows as drift. To leave one unmanaged, name it in',
    '  `ignore_changes: [role]` on the object, or in `settings.ignore_changes`. A value written here is pinned.',
    mapping.pinAddresses
      ? '- Device tunnel addresses (ipv4, ipv6) are pinned to what the server assigned, so a recreated device keeps them and a hand change shows as drift. Delete those lines to let the server choose.'
      : '- Device tunnel addresses (ipv4, ipv6) are left out (exported with --no-addresses): the server keeps choosing them.',
    '- `configuration:` (when the server has /v0/configuration) holds the device defaults and the',
    '  unprivileged-user flags, managed: a hand change of them shows as drift. Delete a line to stop managing it.',
    ...(leftOut.length > 0
      ? [
          'Left out, because no desired state can declare them as the server holds them: fix or delete them',
          'on the server (by id), then export again. Until then `netform plan` shows them (with prune on, as deletions):',
          ...leftOut.map((line) => `- ${line}`),
        ]
      : []),
  ];
  return lines.map((line) => `# ${line}`).join('\n') + '\n';
}

/** `3 users, 1 device, 0 rules`. */
export function describeCounts(counts: ExportResult['counts']): string {
  const n = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;
  return `${n(counts.users, 'user')}, ${n(counts.devices, 'device')}, ${n(counts.rules, 'rule')}`;
}

function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    parsed.search = '';
    parsed.hash = '';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return '(server)';
  }
}

const FILE_NAME_SAFE = /[a-z0-9@._+-]/;
const MAX_FILE_NAME_BYTES = 200;

/**
 * A file name for a user's file that is safe for any email on every common file system: lower
 * case (emails are unique case-insensitively, and so are some file systems), anything but
 * letters, digits and `@._+-` percent-encoded, no leading dot, and a bounded length (a hash of
 * the email keeps long names apart).
 */
export function userFileName(email: string): string {
  let stem = '';
  for (const char of email.trim().toLowerCase()) {
    stem +=
      FILE_NAME_SAFE.test(char) && char.length === 1
        ? char
        : [...Buffer.from(char, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  }
  if (stem.startsWith('.')) stem = `%2E${stem.slice(1)}`;
  if (Buffer.byteLength(stem) > MAX_FILE_NAME_BYTES) {
    const hash = createHash('sha256').update(userKey(email)).digest('hex').slice(0, 12);
    stem = `${stem.slice(0, MAX_FILE_NAME_BYTES - 13)}~${hash}`;
  }
  return `${stem}.yaml`;
}

function uniqueName(name: string, taken: Set<string>): string {
  let candidate = name;
  for (let n = 2; taken.has(candidate); n++) candidate = name.replace(/\.yaml$/, `~${n}.yaml`);
  taken.add(candidate);
  return candidate;
}
