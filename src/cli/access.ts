/**
 * `netform test -f PATH` runs the access tests of a desired state, offline against its declared
 * rules, or with `--live` against the rules and devices of a server. `netform explain FROM TO`
 * shows how one packet is decided. Apply refuses a failing test (refuseFailingTests); plan runs the
 * tests with the plan and writes their failures first (plan.ts, W3.6).
 */
import { Option, type Command } from 'commander';
import {
  accessModelOfDesired,
  accessModelOfLive,
  accessSettingsOf,
  CompiledRules,
  describeMatch,
  evaluateFrom,
  parseFrom,
  parseTo,
  ruleLocation,
  runAccessTests,
  testLine,
  type AccessModel,
  type Decision,
  type Match,
  type TestResult,
} from '../access/index.js';
import type { DesiredState } from '../model/state.js';
import { formatDiagnostic, type Diagnostic } from '../desired/index.js';
import { findingsOfDiagnostics, findingsOfTests, netformVersion, sarifLog } from '../sarif/index.js';
import { addConnectionOptions, openConnection, readLiveState, type ConnectionOptions } from './connection.js';
import { action } from './boundary.js';
import { CliError, ExitCode } from './exit.js';
import { loadDesired } from './plan.js';
import { githubAnnotation } from './validate.js';
import { inertText } from '../render/escape.js';

interface AccessOptions extends ConnectionOptions {
  file?: string;
  live?: boolean;
  format: 'text' | 'json' | 'github' | 'sarif';
}

/** W3.6: secrets are not needed to evaluate rules; one that cannot be read is only a warning here. */
function warnAbout(warnings: readonly Diagnostic[]): void {
  for (const warning of warnings) process.stderr.write(`warning: ${formatDiagnostic(warning)}\n`);
}

/** The access model to evaluate against: the declared one, or with --live the server's. */
async function modelFor(opts: AccessOptions, desired: DesiredState | undefined): Promise<AccessModel> {
  if (!opts.live) {
    if (!desired) throw new CliError('give -f PATH (the desired state), or --live with --url/--embedded');
    return accessModelOfDesired(desired);
  }
  const connection = await openConnection(opts);
  try {
    const live = await readLiveState(connection);
    return accessModelOfLive(live, desired ? accessSettingsOf(desired) : undefined);
  } finally {
    await connection.close();
  }
}

function testJson(result: TestResult): Record<string, unknown> {
  const { test } = result;
  return {
    name: test.name,
    from: test.from,
    to: test.to,
    expect: test.expect,
    pass: result.pass,
    ...(test.source ? { file: test.source.file, line: test.source.line } : {}),
    ...(result.error ? { error: result.error } : {}),
    results: result.decisions.map((d) => ({
      user: d.user,
      ...(d.device ? { device: d.device } : {}),
      ...decisionJson(d.decision),
    })),
  };
}

function matchJson(match: Match): Record<string, unknown> {
  const { rule } = match;
  const where = ruleLocation(rule);
  return {
    action: rule.action,
    destination: rule.destination,
    port_type: rule.port_type,
    port_range: rule.port_range,
    user: rule.owner,
    scope: match.scope,
    stage: match.stage,
    ...(where ? { at: where } : {}),
  };
}

function decisionJson(decision: Decision): Record<string, unknown> {
  return {
    verdict: decision.verdict,
    reason: decision.reason,
    ...(decision.decidedBy ? { rule: matchJson(decision.decidedBy) } : {}),
    ...(decision.alsoMatched.length > 0 ? { also_matched: decision.alsoMatched.map(matchJson) } : {}),
  };
}

/** Apply refuses (exit 1, nothing written) when an access test of the desired state fails. */
export function refuseFailingTests(state: DesiredState): void {
  if (!state.tests || state.tests.length === 0) return;
  const failed = runAccessTests(accessModelOfDesired(state), state.tests).filter((r) => !r.pass);
  if (failed.length === 0) return;
  const lines = failed.map(
    (r) => `  ${r.test.source ? `${r.test.source.file}:${r.test.source.line}: ` : ''}${testLine(r)}`,
  );
  throw new CliError(
    `${failed.length} access test${failed.length === 1 ? '' : 's'} failed; nothing was planned or written:\n${lines.join('\n')}`,
  );
}

export function registerTest(program: Command): void {
  const cmd = program
    .command('test')
    .description(
      'run the access tests (tests:) of the desired state against its rules, or with --live against the server; exit 0 all pass, 1 otherwise',
    )
    .requiredOption('-f, --file <path>', 'desired state: a YAML file, a folder of YAML files, or a cdk.tf.json')
    .option(
      '--live',
      "evaluate against the server's rules and devices (--url or --embedded) instead of the declared ones",
    )
    .addOption(
      new Option('--format <format>', 'output format').choices(['text', 'json', 'github', 'sarif']).default('text'),
    );
  addConnectionOptions(cmd);
  cmd.action(
    action(async (opts: AccessOptions & { file: string }) => {
      const { state, warnings } = await loadDesired(opts.file);
      const tests = state.tests ?? [];
      const results = runAccessTests(await modelFor(opts, state), tests);
      const failed = results.filter((r) => !r.pass).length;
      if (opts.format === 'sarif') {
        const findings = [...findingsOfTests(results), ...findingsOfDiagnostics([], warnings)];
        process.stdout.write(
          `${JSON.stringify(sarifLog({ name: 'netform', version: netformVersion() }, findings), null, 2)}\n`,
        );
        return failed > 0 ? ExitCode.error : ExitCode.ok;
      }
      warnAbout(warnings);
      if (opts.format === 'json') {
        process.stdout.write(
          `${JSON.stringify({ passed: results.length - failed, failed, tests: results.map(testJson) }, null, 2)}\n`,
        );
      } else {
        for (const result of results) {
          const source = result.test.source;
          if (opts.format === 'github' && !result.pass) {
            process.stdout.write(
              `${githubAnnotation({ message: testLine(result), file: source?.file, line: source?.line, column: source?.column })}\n`,
            );
          } else {
            process.stdout.write(
              `${inertText(`${source ? `${source.file}:${source.line}: ` : ''}${testLine(result)}`)}\n`,
            );
          }
        }
        const against = opts.live ? 'the live server' : 'the declared rules';
        process.stdout.write(
          tests.length === 0
            ? 'no tests: add a tests: list to the desired state\n'
            : `${results.length - failed} passed, ${failed} failed (against ${against})\n`,
        );
      }
      return failed > 0 ? ExitCode.error : ExitCode.ok;
    }),
  );
}

/** The few lines of `netform explain` for one source. */
function explainLines(who: string, decision: Decision): string[] {
  // W3.6: a source without a tunnel says why on its line: `NO TUNNEL (no device)`.
  if (decision.verdict === 'no tunnel') return [`${who}: NO TUNNEL (${decision.reason})`];
  const lines = [`${who}: ${decision.verdict.toUpperCase()}`];
  if (decision.decidedBy) lines.push(`  decided by ${describeMatch(decision.decidedBy)}`);
  else lines.push(`  ${decision.reason}`);
  for (const later of decision.alsoMatched) lines.push(`  also matches, evaluated later: ${describeMatch(later)}`);
  return lines;
}

export function registerExplain(program: Command): void {
  const cmd = program
    .command('explain <from> <to>')
    .description(
      'how the server decides one packet: FROM is *, EMAIL (each device), EMAIL/DEVICE or EMAIL/* (any device of the user); TO is ADDRESS:PORT/tcp|udp, ADDRESS/icmp or ADDRESS',
    )
    .option('-f, --file <path>', 'desired state: a YAML file, a folder of YAML files, or a cdk.tf.json')
    .option('--live', "evaluate against the server's rules and devices (--url or --embedded)")
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'));
  addConnectionOptions(cmd);
  cmd.action(
    action(async (fromText: string, toText: string, opts: AccessOptions) => {
      const from = parseFrom(fromText);
      if (!from.ok) throw new CliError(`FROM ${from.message}`);
      const to = parseTo(toText);
      if (!to.ok) throw new CliError(`TO ${to.message}`);
      if (!opts.file && !opts.live)
        throw new CliError('give -f PATH (the desired state), or --live with --url/--embedded');
      const loaded = opts.file ? await loadDesired(opts.file) : undefined;
      if (loaded) warnAbout(loaded.warnings);
      const desired = loaded?.state;
      const model = await modelFor(opts, desired);
      const evaluated = evaluateFrom(model, new CompiledRules(model), from.value, to.value, true);
      if (!evaluated.ok) throw new CliError(evaluated.message);
      if (opts.format === 'json') {
        const results = evaluated.value.map((d) => ({
          user: d.user,
          ...(d.device ? { device: d.device } : {}),
          ...decisionJson(d.decision),
        }));
        process.stdout.write(`${JSON.stringify({ from: fromText, to: toText, results }, null, 2)}\n`);
        return ExitCode.ok;
      }
      // Sources with the same decision are shown once.
      const groups = new Map<string, { who: string[]; decision: Decision }>();
      for (const d of evaluated.value) {
        const key = JSON.stringify(decisionJson(d.decision));
        const who = `${d.user}${d.device ? `/${d.device}` : ''}`;
        const group = groups.get(key);
        if (group) group.who.push(who);
        else groups.set(key, { who: [who], decision: d.decision });
      }
      const lines: string[] = [`${fromText} -> ${toText}`];
      for (const { who, decision } of groups.values()) {
        const shown = who.length > 3 ? `${who.slice(0, 3).join(', ')} and ${who.length - 3} more` : who.join(', ');
        for (const item of explainLines(shown, decision)) lines.push(item);
      }
      process.stdout.write(`${lines.map(inertText).join('\n')}\n`);
      return ExitCode.ok;
    }),
  );
}
