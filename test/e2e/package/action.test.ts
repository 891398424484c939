/**
 * action.yml: parsed, and its steps run the way the GitHub Actions runner runs a composite action
 * (expressions substituted, each `run` in bash with the step's env, outputs read from
 * $GITHUB_OUTPUT), against a real server. `actions/setup-node` is the one step not run: this
 * machine already has Node.js 20. The step's log is read as the runner reads it: live, with
 * workflow commands recognised the way the runner recognises them (::stop-commands:: included).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { builtCli } from '../../helpers/cli.js';
import { closedPortUrl } from '../../helpers/net.js';
import { startTestServer, TEST_ADMIN_EMAIL, type TestServer } from '../../helpers/server.js';
import { shortLivedNodeOptions } from '../../helpers/short-lived-env.js';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy.js';
import { create, serverState, wgKey, workspace, type Workspace } from '../../helpers/workspace.js';
import { git } from '../../helpers/git.js';

/** The test server's admin, as a desired-state entry. */
const ADMIN = `  - { email: ${TEST_ADMIN_EMAIL}, role: admin }\n`;
const ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
const action = parse(readFileSync(join(ROOT, 'action.yml'), 'utf8'));

interface Step {
  name?: string;
  id?: string;
  uses?: string;
  run?: string;
  shell?: string;
  env?: Record<string, string>;
  'working-directory'?: string;
  with?: Record<string, string>;
}

interface RunOptions {
  /** The job's RUNNER_TEMP (kept by the caller); a fresh one otherwise. */
  jobTemp?: string;
  /** More of the runner's environment (GITHUB_EVENT_NAME, ...). */
  env?: Record<string, string>;
}

/** One run of the action: its steps, prepared as the runner prepares them. */
function prepare(inputs: Record<string, string>, workspaceDir: string, options: RunOptions = {}) {
  const given: Record<string, string> = {};
  for (const [name, spec] of Object.entries(action.inputs as Record<string, { default?: string }>))
    given[name] = inputs[name] ?? spec.default ?? '';
  const temp = mkdtempSync(join(tmpdir(), 'netform-action-runner-'));
  const runnerTemp = options.jobTemp ?? temp;
  const stepOutputs: Record<string, Record<string, string>> = {};
  const expand = (text: string) =>
    text.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_m, expr: string) => {
      if (expr === 'github.action_path') return ROOT;
      const input = /^inputs\.([\w-]+)$/.exec(expr);
      if (input) return given[input[1]!] ?? '';
      const output = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(expr);
      if (output) return stepOutputs[output[1]!]?.[output[2]!] ?? '';
      throw new Error(`expression not supported by this test: ${expr}`);
    });
  const summaryPath = join(temp, 'summary.md');
  writeFileSync(summaryPath, '');
  const steps = (action.runs.steps as Step[]).filter((step) => {
    if (step.uses) expect(step.uses).toMatch(/^actions\/setup-node@/);
    return !step.uses;
  });
  const stepRun = (step: Step) => {
    const outputPath = join(temp, `output-${step.id ?? 'step'}`);
    writeFileSync(outputPath, '');
    const env: Record<string, string> = {};
    // The runner's own environment, not this test process's CI variables.
    for (const [k, v] of Object.entries(process.env))
      if (v !== undefined && !/^(GITHUB_|RUNNER_|NETFORM_|INPUT_)/.test(k)) env[k] = v;
    Object.assign(env, {
      GITHUB_OUTPUT: outputPath,
      GITHUB_STEP_SUMMARY: summaryPath,
      RUNNER_TEMP: runnerTemp,
      NO_COLOR: '1',
      NETFORM_RETRY_DELAY_MS: '5',
      // The step's node process (action-stream.mjs, which runs netform) lives a second or less.
      NODE_OPTIONS: shortLivedNodeOptions(process.env.NODE_OPTIONS),
      ...options.env,
    });
    for (const [k, v] of Object.entries(step.env ?? {})) env[k] = expand(v);
    expect(step.shell).toBe('bash');
    return {
      cwd: step['working-directory'] ? expand(step['working-directory']) : workspaceDir,
      env,
      // How the runner runs a bash step.
      args: ['--noprofile', '--norc', '-eo', 'pipefail', '-c', expand(step.run!)],
      collect: () => {
        if (step.id)
          stepOutputs[step.id] = Object.fromEntries(
            readFileSync(outputPath, 'utf8')
              .split('\n')
              .filter((l) => l.includes('='))
              .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
          );
      },
    };
  };
  const finish = () => {
    const outputs = Object.fromEntries(
      Object.entries(action.outputs as Record<string, { value: string }>).map(([k, v]) => [k, expand(v.value)]),
    );
    const read = (path: string | undefined) => (path ? readFileSync(path, 'utf8') : '');
    return {
      outputs,
      summary: readFileSync(summaryPath, 'utf8'),
      output: read(outputs['output-file']),
      unreviewed: read(outputs['unreviewed-file']),
    };
  };
  return { steps, stepRun, finish, cleanup: () => rmSync(temp, { recursive: true, force: true }) };
}

interface ActionResult {
  status: number | null;
  outputs: Record<string, string>;
  /** The last step's log: stdout and stderr as the runner records them. */
  log: string;
  summary: string;
  /** What output-file holds (netform's stdout). */
  output: string;
  unreviewed: string;
}

/**
 * Whether the install step (scripts/action-install.sh) has run in this file. It installs and
 * builds only in a checkout without node_modules or dist/, which this one has; what is left of it
 * (`netform --version`) is the same every time, so each file runs it once, in its first run of the
 * action (and fails that run if it fails), and later runs start at the step after it.
 */
let installed = false;
const isInstall = (step: Step) => step.run?.includes('action-install.sh') === true;

interface ShellResult {
  /** The exit status; null when a signal ended the shell. */
  status: number | null;
  stdout: string;
  /** stdout, then stderr. */
  log: string;
}

/** A step's shell (bash ARGS), run to its end without blocking this process (the test server is in it). */
function runShell(args: string[], cwd: string, env: Record<string, string>): Promise<ShellResult> {
  return new Promise((done) => {
    const child = spawn('bash', args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', (error) => (stderr += `${error.message}\n`));
    child.on('close', (code) => done({ status: code, stdout, log: stdout + stderr }));
  });
}

/** Runs one step before the last: the install step once per file (see `installed`). */
async function runEarlierStep(run: ReturnType<typeof prepare>, step: Step) {
  if (isInstall(step) && installed) return { status: 0 as number | null, stdout: '', log: '' };
  const { cwd, env, args, collect } = run.stepRun(step);
  const result = await runShell(args, cwd, env);
  collect();
  if (isInstall(step) && result.status === 0) {
    expect(result.stdout.trim(), 'the install step prints the version it installed').toMatch(/^\d+\.\d+\.\d+/m);
    installed = true;
  }
  return result;
}

/** Runs the action's steps with these inputs in `workspaceDir`, as one step of a job. */
async function runAction(
  inputs: Record<string, string>,
  workspaceDir: string,
  options: RunOptions = {},
): Promise<ActionResult> {
  const run = prepare(inputs, workspaceDir, options);
  try {
    let last: ShellResult = { status: 0, stdout: '', log: '' };
    for (const [i, step] of run.steps.entries()) {
      if (i < run.steps.length - 1) last = await runEarlierStep(run, step);
      else {
        const { cwd, env, args, collect } = run.stepRun(step);
        last = await runShell(args, cwd, env);
        collect();
      }
      if (last.status !== 0) break;
    }
    return { status: last.status, log: last.log, ...run.finish() };
  } finally {
    run.cleanup();
  }
}

/** The last step started in the background (its own process group, as the runner starts it), to watch its log live. */
async function startAction(inputs: Record<string, string>, workspaceDir: string, options: RunOptions = {}) {
  const run = prepare(inputs, workspaceDir, options);
  const steps = run.steps;
  for (const step of steps.slice(0, -1)) {
    const result = await runEarlierStep(run, step);
    expect(result.status, result.log).toBe(0);
  }
  const last = run.stepRun(steps.at(-1)!);
  const child: ChildProcess = spawn('bash', last.args, { cwd: last.cwd, env: last.env, detached: true });
  let log = '';
  const waiters = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    log += chunk.toString('utf8');
    for (const check of [...waiters]) check();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((done) =>
    child.on('close', (code, signal) => done(code ?? (signal ? -1 : null))),
  );
  return {
    child,
    log: () => log,
    /** Resolves once the log matches `count` times. */
    waitFor: (pattern: RegExp, count = 1, timeoutMs = 30_000) =>
      new Promise<void>((resolveWait, reject) => {
        const check = () => {
          if ((log.match(new RegExp(pattern.source, `${pattern.flags.replace('g', '')}g`)) ?? []).length >= count) {
            finish();
            resolveWait();
          }
        };
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`the log did not match ${String(pattern)} ${count} times:\n${log}`));
        }, timeoutMs);
        const finish = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      }),
    /**
     * netform's own process: the node process under the step's shell, which runs netform's
     * dist/src/cli/main.js through scripts/action-stream.mjs (in that process).
     */
    netformPid: () => {
      const ps = spawnSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' }).stdout;
      const rows = ps
        .split('\n')
        .map((l) => l.trim().split(/\s+/))
        .filter((r) => r.length > 2)
        .map(([pid, ppid, ...cmd]) => ({ pid: Number(pid), ppid: Number(ppid), cmd: cmd.join(' ') }));
      const under = new Set([child.pid!]);
      for (let grew = true; grew;) {
        grew = false;
        for (const r of rows)
          if (under.has(r.ppid) && !under.has(r.pid)) {
            under.add(r.pid);
            grew = true;
          }
      }
      const netform = rows.find(
        (r) =>
          under.has(r.pid) &&
          /^\S*node \S*scripts\/action-stream\.mjs \S+ (?:tee|quiet) \S*dist\/src\/cli\/main\.js /.test(r.cmd),
      );
      if (!netform) throw new Error(`netform is not running under the step (${child.pid}):\n${ps}`);
      return netform.pid;
    },
    finish: async () => {
      const status = await exited;
      last.collect();
      try {
        return { status, log, ...run.finish() };
      } finally {
        run.cleanup();
      }
    },
    kill: () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    },
  };
}

/** bash's own notice of a job ended by a signal ("[1]+  Killed  node …"): never in the step's log. */
const SHELL_JOB_NOTICE = /^\[\d+\][+-]? +(?:Killed|Terminated|Interrupt)\b|: line \d+: +\d+ (?:Killed|Terminated)\b/m;

/**
 * The workflow commands the runner would act on in `log`, as it reads them (actions/runner,
 * ActionCommandManager.TryProcessCommand): `::name …::…` at the start of a line, else the old
 * syntax `##[name …]…` anywhere in the line; none between `::stop-commands::TOKEN` and `::TOKEN::`.
 */
function workflowCommands(log: string): { issued: string[]; stoppedAtEnd: boolean } {
  let token: string | null = null;
  const issued: string[] = [];
  for (const raw of log.split(/\r?\n/)) {
    const line = raw.trimStart();
    if (token !== null) {
      if (line.trim() === `::${token}::`) token = null;
      continue;
    }
    const command = /^::([A-Za-z][\w-]*)(?: [^:]*)?::(.*)$/.exec(line);
    const at = line.indexOf('##[');
    const legacy = command || at < 0 ? null : /^##\[([A-Za-z][\w-]*)[^\]]*\](.*)$/.exec(line.slice(at));
    const found = command ?? legacy;
    if (!found) continue;
    if (found[1] === 'stop-commands') token = found[2]!.trim();
    else issued.push(command ? line : line.slice(at));
  }
  return { issued, stoppedAtEnd: token !== null };
}

describe('action.yml', () => {
  // One server for the file: each case declares users of a domain of its own. In this process (the
  // server is not what is tested here): the steps run as children, which this process waits for
  // without blocking.
  let server: TestServer;
  beforeAll(async () => {
    // The Action runs the checkout's dist/ (scripts/action-run.sh): a stale build is refused by name.
    builtCli();
    // Its request logs are not read here: warnings and errors only.
    server = await startTestServer({ logLevel: 'warn' });
  });
  afterAll(async () => {
    await server.stop();
  });

  it('is a composite action with the inputs and outputs CI needs', () => {
    expect(action.runs.using).toBe('composite');
    for (const input of [
      'command',
      'path',
      'format',
      'url',
      'token',
      'token-user',
      'plan-file',
      'reviewed-plan',
      'base',
      'approvals',
      'args',
    ])
      expect(action.inputs).toHaveProperty(input);
    for (const output of ['exit-code', 'plan-file', 'output-file', 'unreviewed-file'])
      expect(action.outputs).toHaveProperty(output);
    const install = (action.runs.steps as Step[]).find((s) => s.run?.includes('action-install.sh'))!;
    expect(install['working-directory']).toBe('${{ github.action_path }}');
  });

  // Each case runs the Action up to four times, each run's shell bounded by its own 120 s
  // (runShell), not the 30 s default meant for in-process tests.
  describe('run as the Action would run it', { timeout: 600_000 }, () => {
    let ws: Workspace;
    beforeAll(() => {
      ws = workspace();
      // The server's admin is declared: an admin in no file keeps drift pending (W3.5).
      ws.write('desired/netform.yaml', `version: 1\nusers:\n${ADMIN}  - email: action@ci.test\n`);
    });
    afterAll(() => {
      ws.cleanup();
    });
    const secrets = () => ({ url: server.url, token: server.token, 'token-user': TEST_ADMIN_EMAIL });

    it('validate, plan (markdown + saved plan), apply the saved plan, then drift is clean', async () => {
      const validated = await runAction({ command: 'validate' }, ws.dir);
      expect(validated.status, validated.log).toBe(0);
      expect(validated.outputs['exit-code']).toBe('0');

      const job = mkdtempSync(join(tmpdir(), 'netform-action-job-'));
      const planned = await runAction({ command: 'plan', ...secrets() }, ws.dir, { jobTemp: job });
      expect(planned.status, planned.log).toBe(0);
      expect(planned.outputs['exit-code']).toBe('2');
      expect(planned.output.startsWith('<!-- netform-plan -->')).toBe(true);
      // The log shows what netform printed, as it printed it, inside the stopped-commands window.
      expect(planned.log).toContain(planned.output);
      expect(planned.log).toMatch(/^::stop-commands::[0-9a-f]{32}\n<!-- netform-plan -->/);
      expect(workflowCommands(planned.log)).toEqual({ issued: [], stoppedAtEnd: false });
      expect(planned.summary).toContain('+ user action@ci.test');
      expect(planned.log).not.toContain(server.token);
      const planFile = planned.outputs['plan-file']!;
      expect(planFile).toBe(join(job, 'netform-plan.json'));
      expect(JSON.parse(readFileSync(planFile, 'utf8')).format).toBe('netform.plan');

      const applied = await runAction({ command: 'apply', 'plan-file': planFile, ...secrets() }, ws.dir, {
        jobTemp: job,
      });
      expect(applied.status, applied.log).toBe(0);
      expect(applied.outputs['exit-code']).toBe('0');
      // Each write's line once: the Action prints netform's output as it comes, never again afterwards.
      expect(applied.log.match(/^created user action@ci\.test \(/gm)).toHaveLength(1);
      expect((await serverState(server)).users.map((u) => u.email)).toContain('action@ci.test');

      const drift = await runAction({ command: 'drift', ...secrets() }, ws.dir);
      expect(drift.status, drift.log).toBe(0);
      expect(drift.outputs['exit-code']).toBe('0');
      rmSync(job, { recursive: true, force: true });
    });

    it('review: the access map goes to output-file only, never to the log or the job summary', async () => {
      const reviewed = await runAction({ command: 'review', ...secrets() }, ws.dir);
      expect(reviewed.status, reviewed.log).toBe(0);
      expect(reviewed.outputs['exit-code']).toBe('0');
      expect(reviewed.outputs['output-file']).toMatch(/netform-review\.md$/);
      expect(reviewed.output.startsWith('# Access review')).toBe(true);
      expect(reviewed.output).toContain(`\`${TEST_ADMIN_EMAIL}\`: admin`);
      expect(reviewed.log).not.toContain('# Access review');
      expect(reviewed.log).not.toContain(TEST_ADMIN_EMAIL);
      expect(reviewed.summary).not.toContain('# Access review');
      const csv = await runAction({ command: 'review', format: 'csv', ...secrets() }, ws.dir);
      expect(csv.status, csv.log).toBe(0);
      expect(csv.outputs['output-file']).toMatch(/netform-review\.csv$/);
      expect(csv.output.split('\r\n')[0]).toBe(
        'section,user,role,device,verdict,addresses,protocol,ports,rule,rule_at,evidence,date',
      );
    });

    it('fails the step on exit 1, and on exit 2 only with fail-on-changes', async () => {
      const down = await runAction({ command: 'plan', url: await closedPortUrl(), token: 'nf_x' }, ws.dir);
      expect(down.status).toBe(1);
      expect(down.outputs['exit-code']).toBe('1');
      ws.write(
        'desired/netform.yaml',
        `version: 1\nusers:\n${ADMIN}  - email: action@ci.test\n  - email: more@ci.test\n`,
      );
      const strict = await runAction(
        { command: 'drift', 'fail-on-changes': 'true', format: 'json', ...secrets() },
        ws.dir,
      );
      expect(strict.status).toBe(2);
      expect(strict.outputs['exit-code']).toBe('2');
      expect(JSON.parse(strict.output).changes).toHaveLength(1);
      const both = await runAction(
        { command: 'apply', 'plan-file': 'a.json', 'reviewed-plan': 'b.json', ...secrets() },
        ws.dir,
      );
      expect(both.status).toBe(1);
      expect(workflowCommands(both.log).issued).toEqual([
        expect.stringMatching(/^::error::netform action: give plan-file .* or reviewed-plan .*, not both$/),
      ]);
    });

    it('test --format github: no test or file name issues a command, ##[ included; the failing test keeps its annotation (2026-11b G2)', async () => {
      // The report's reproduction: a mask, a forged annotation, commands stopped with a token of the PR's.
      ws.write(
        'gh/n.yaml',
        [
          'version: 1',
          'users:',
          '  - email: alice@example.com',
          'rules:',
          '  - {action: drop, destination: 10.1.0.0/16}',
          'tests:',
          '  - { name: "ok ##[add-mask]alice ##[error title=x]PR check passed - safe to merge", from: alice@example.com, to: "10.1.2.3:22/tcp", expect: drop }',
          '  - { name: "second ##[stop-commands]hidehide", from: alice@example.com, to: "10.1.2.3:22/tcp", expect: drop }',
          '  - { name: "failing one", from: alice@example.com, to: "10.1.2.3:22/tcp", expect: accept }',
          '',
        ].join('\n'),
      );
      const tested = await runAction({ command: 'test', path: 'gh/n.yaml' }, ws.dir);
      expect(tested.status, tested.log).toBe(1);
      expect(tested.log).toContain('PASS ok #\\u0023[add-mask]alice #\\u0023[error title=x]PR check passed');
      expect(workflowCommands(tested.log)).toEqual({
        issued: [expect.stringMatching(/^::error file=gh\/n\.yaml,line=9,col=5::FAIL failing one: /)],
        stoppedAtEnd: false,
      });

      // A file name works the same way.
      ws.write(
        'gh2/##[error]fake.yaml',
        'version: 1\nusers:\n  - email: bob@example.com\ntests:\n  - { name: ok, from: bob@example.com, to: "10.1.2.3:22/tcp", expect: drop }\n',
      );
      const named = await runAction({ command: 'test', path: 'gh2/' }, ws.dir);
      expect(named.status, named.log).toBe(0);
      expect(named.log).toContain('gh2/#\\u0023[error]fake.yaml:5: PASS ok');
      expect(workflowCommands(named.log)).toEqual({ issued: [], stoppedAtEnd: false });
    });

    it('the resume line starts a line of its own when netform is killed in the middle of one', () => {
      // A stand-in for netform that writes half a line and is killed by SIGTERM (exit 143: no message follows).
      const fake = mkdtempSync(join(tmpdir(), 'netform-action-fake-'));
      try {
        mkdirSync(join(fake, 'dist', 'src', 'cli'), { recursive: true });
        mkdirSync(join(fake, 'scripts'));
        symlinkSync(join(ROOT, 'scripts', 'action-stream.mjs'), join(fake, 'scripts', 'action-stream.mjs'));
        writeFileSync(
          join(fake, 'dist', 'src', 'cli', 'main.js'),
          "process.stdout.write('Plan: 1 to create, half a li', () => process.kill(process.pid, 'SIGTERM'));\n",
        );
        const env: Record<string, string> = {};
        for (const [k, v] of Object.entries(process.env))
          if (v !== undefined && !/^(GITHUB_|RUNNER_|NETFORM_|INPUT_)/.test(k)) env[k] = v;
        const run = spawnSync('bash', [join(ROOT, 'scripts', 'action-run.sh')], {
          cwd: ws.dir,
          env: { ...env, NETFORM_ACTION_PATH: fake, INPUT_COMMAND: 'plan', INPUT_PATH: 'desired/', RUNNER_TEMP: fake },
          encoding: 'utf8',
          timeout: 60_000,
        });
        const log = run.stdout + run.stderr;
        expect(run.status, log).toBe(143);
        expect(log).toMatch(/^::stop-commands::[0-9a-f]{32}\nPlan: 1 to create, half a li\n/);
        expect(log).toMatch(/\n::[0-9a-f]{32}::\n$/);
        expect(log).not.toMatch(SHELL_JOB_NOTICE);
        expect(workflowCommands(log)).toEqual({ issued: [], stoppedAtEnd: false });
      } finally {
        rmSync(fake, { recursive: true, force: true });
      }
    });

    it('validate --format github: its annotations are workflow commands, meant to be', async () => {
      ws.write('broken/netform.yaml', 'version: 1\nusers:\n  - email: not-an-email\n');
      const validated = await runAction({ command: 'validate', path: 'broken/' }, ws.dir);
      expect(validated.status).toBe(1);
      const { issued } = workflowCommands(validated.log);
      expect(issued.length).toBeGreaterThan(0);
      expect(issued[0]).toMatch(/^::error file=broken\/netform\.yaml,line=3/);
    });

    it('merge with reviewed-plan: applies what was reviewed, withholds the rest (exit 5) with the markdown of what is left', async () => {
      ws.write(
        'merge/netform.yaml',
        'version: 1\nsettings:\n  prune: true\n  manage: { users: ["*@merge-ci.test"], rules: [] }\nusers:\n  - email: kim@merge-ci.test\n',
      );
      const job = mkdtempSync(join(tmpdir(), 'netform-action-job-'));
      try {
        const planned = await runAction({ command: 'plan', path: 'merge/', ...secrets() }, ws.dir, { jobTemp: job });
        expect(planned.outputs['exit-code'], planned.log).toBe('2');
        const reviewed = join(job, 'reviewed.json');
        writeFileSync(reviewed, readFileSync(planned.outputs['plan-file']!));
        await create(server, 'users', { email: 'newhire@merge-ci.test' });

        const merged = await runAction(
          { command: 'apply', path: 'merge/', format: 'text', 'reviewed-plan': reviewed, ...secrets() },
          ws.dir,
          { jobTemp: job },
        );
        expect(merged.status, merged.log).toBe(5);
        expect(merged.outputs['exit-code']).toBe('5');
        expect(merged.log).toContain('created user kim@merge-ci.test (');
        expect(merged.log).toContain('withheld: not in the reviewed plan');
        expect(merged.unreviewed.startsWith('<!-- netform-plan -->')).toBe(true);
        expect(merged.unreviewed).toContain('- user newhire@merge-ci.test');
        expect(merged.unreviewed).not.toContain('kim@merge-ci.test');
        expect(merged.summary).toContain('- user newhire@merge-ci.test');
        expect(workflowCommands(merged.log)).toEqual({ issued: [], stoppedAtEnd: false });
        const emails = (await serverState(server)).users.map((u) => u.email);
        expect(emails).toEqual(expect.arrayContaining(['kim@merge-ci.test', 'newhire@merge-ci.test']));
      } finally {
        rmSync(job, { recursive: true, force: true });
      }
    });

    it('merge with reviewed-plan and approvals: owners read at HEAD^1, withheld without an approval, applied with one', async () => {
      const repo = ws.path('owned');
      const desiredAt = (users: string) =>
        `version: 1\nsettings:\n  manage: { users: ["*@owned-ci.test"], rules: [] }\n  owners:\n    - users: ["*@owned-ci.test"]\n      reviewers: ["@org/ops"]\nusers:\n${users}`;
      ws.write('owned/desired/netform.yaml', desiredAt('  - email: lee@owned-ci.test\n'));
      git(ws.dir, 'init', '-q', '-b', 'main', repo);
      git(repo, 'add', '.');
      git(repo, 'commit', '-q', '-m', 'main');
      const job = mkdtempSync(join(tmpdir(), 'netform-action-job-'));
      try {
        expect((await runAction({ command: 'apply', path: 'owned/desired/', ...secrets() }, ws.dir)).status).toBe(0);
        ws.write(
          'owned/desired/netform.yaml',
          desiredAt('  - email: lee@owned-ci.test\n  - email: kim@owned-ci.test\n'),
        );
        git(repo, 'commit', '-q', '-am', 'kim');
        const head = git(repo, 'rev-parse', 'HEAD');
        const event = join(job, 'event.json');
        writeFileSync(event, JSON.stringify({ pull_request: { head: { sha: head }, user: { login: 'carol' } } }));
        const planned = await runAction(
          { command: 'plan', path: 'owned/desired/', base: 'none', ...secrets() },
          ws.dir,
          {
            jobTemp: job,
            env: { GITHUB_EVENT_NAME: 'pull_request', GITHUB_EVENT_PATH: event },
          },
        );
        expect(planned.outputs['exit-code'], planned.log).toBe('2');
        expect(planned.output).toContain('approval needed from `@org/ops`');
        const reviewed = join(job, 'reviewed.json');
        writeFileSync(reviewed, readFileSync(planned.outputs['plan-file']!));
        git(repo, 'commit', '-q', '--allow-empty', '-m', 'merge');

        const approvals = join(job, 'approvals.json');
        writeFileSync(approvals, JSON.stringify([{ login: 'carol', teams: ['@org/ops'], commit: head }]));
        const inputs = {
          command: 'apply',
          path: 'owned/desired/',
          format: 'text',
          'reviewed-plan': reviewed,
          approvals,
        };
        const byAuthor = await runAction({ ...inputs, ...secrets() }, ws.dir, { jobTemp: job });
        expect(byAuthor.status, byAuthor.log).toBe(5);
        expect(byAuthor.log).toContain('withheld: approval needed (from @org/ops)');
        expect(byAuthor.log).toContain('approval missing from @org/ops');
        expect(byAuthor.log).not.toContain('the checkout has no HEAD^1');
        expect((await serverState(server)).users.map((u) => u.email)).not.toContain('kim@owned-ci.test');

        writeFileSync(approvals, JSON.stringify([{ login: 'dana', teams: ['@org/ops'], commit: head }]));
        const approved = await runAction({ ...inputs, ...secrets() }, ws.dir, { jobTemp: job });
        expect(approved.status, approved.log).toBe(0);
        expect((await serverState(server)).users.map((u) => u.email)).toContain('kim@owned-ci.test');
      } finally {
        rmSync(job, { recursive: true, force: true });
      }
    });

    it('plan on a pull request: fetches the base branch itself and compares with it', async () => {
      const origin = ws.path('origin.git');
      const seed = ws.path('seed');
      git(ws.dir, 'init', '-q', '--bare', '-b', 'main', origin);
      git(ws.dir, 'init', '-q', '-b', 'main', seed);
      ws.write(
        'seed/desired/netform.yaml',
        'version: 1\nsettings:\n  manage: { users: ["*@pr-ci.test"], rules: [] }\nusers:\n  - email: merged@pr-ci.test\n',
      );
      git(seed, 'add', '.');
      git(seed, 'commit', '-q', '-m', 'merged, not applied');
      git(seed, 'push', '-q', origin, 'main');
      git(seed, 'checkout', '-q', '-b', 'pr');
      ws.write(
        'seed/desired/netform.yaml',
        'version: 1\nsettings:\n  manage: { users: ["*@pr-ci.test"], rules: [] }\nusers:\n  - email: merged@pr-ci.test\n  - email: mine@pr-ci.test\n',
      );
      git(seed, 'commit', '-q', '-am', 'mine');
      git(seed, 'push', '-q', origin, 'pr');
      // As actions/checkout leaves it: one commit of the pull request, no base branch.
      const checkout = ws.path('checkout');
      git(ws.dir, 'clone', '-q', '--depth', '1', '--branch', 'pr', `file://${origin}`, checkout);
      expect(spawnSync('git', ['-C', checkout, 'rev-parse', '--verify', '-q', 'origin/main']).status).not.toBe(0);

      const env = { GITHUB_EVENT_NAME: 'pull_request', GITHUB_BASE_REF: 'main' };
      const planned = await runAction({ command: 'plan', ...secrets() }, checkout, { env });
      expect(planned.outputs['exit-code'], planned.log).toBe('2');
      expect(planned.output).toContain('Compared with `origin/main`');
      const own = planned.output.indexOf("<summary>This pull request's changes</summary>");
      const also = planned.output.indexOf("<summary>Also applied on merge: already in origin/main's plan");
      expect(planned.output.indexOf('+ user mine@pr-ci.test')).toBeGreaterThan(own);
      expect(planned.output.indexOf('+ user mine@pr-ci.test')).toBeLessThan(also);
      expect(planned.output.indexOf('+ user merged@pr-ci.test')).toBeGreaterThan(also);

      const none = await runAction({ command: 'plan', base: 'none', ...secrets() }, checkout, { env });
      expect(none.output).not.toContain('Compared with');
      const notFetched = await runAction({ command: 'plan', ...secrets() }, checkout, {
        env: { GITHUB_EVENT_NAME: 'pull_request', GITHUB_BASE_REF: 'no-such-branch' },
      });
      expect(notFetched.outputs['exit-code']).toBe('2');
      expect(workflowCommands(notFetched.log).issued).toEqual([
        expect.stringMatching(/^::warning::netform action: could not fetch the base branch no-such-branch/),
      ]);
    });

    it('check no-new-access on a pull request: compared with the fetched base, each new grant an annotation at its rule (exit 1)', async () => {
      const origin = ws.path('gate-origin.git');
      const seed = ws.path('gate-seed');
      git(ws.dir, 'init', '-q', '--bare', '-b', 'main', origin);
      git(ws.dir, 'init', '-q', '-b', 'main', seed);
      const files = (ports: string) =>
        `version: 1\nusers:\n  - email: gate@pr-ci.test\n    devices:\n      - { name: laptop, public_key: "${wgKey()}" }\n    rules:\n      - { action: accept, destination: 10.20.0.0/16, port_type: tcp, port_range: "${ports}" }\nrules:\n  - { action: drop, destination: 10.0.0.0/8 }\n`;
      ws.write('gate-seed/desired/netform.yaml', files('5432'));
      git(seed, 'add', '.');
      git(seed, 'commit', '-q', '-m', 'base');
      git(seed, 'push', '-q', origin, 'main');
      git(seed, 'checkout', '-q', '-b', 'pr');
      ws.write('gate-seed/desired/netform.yaml', files('5432-5440'));
      git(seed, 'commit', '-q', '-am', 'wider');
      git(seed, 'push', '-q', origin, 'pr');
      const checkout = ws.path('gate-checkout');
      git(ws.dir, 'clone', '-q', '--depth', '1', '--branch', 'pr', `file://${origin}`, checkout);

      const env = { GITHUB_EVENT_NAME: 'pull_request', GITHUB_BASE_REF: 'main' };
      const checked = await runAction({ command: 'check' }, checkout, { env });
      expect(checked.status, checked.log).toBe(1);
      expect(checked.outputs['exit-code']).toBe('1');
      expect(workflowCommands(checked.log).issued).toEqual([
        '::error file=desired/netform.yaml,line=7::gate@pr-ci.test (laptop) → tcp 5433-5440 to 10.20.0.0/16 (by accept 10.20.0.0/16 tcp 5432-5440 (gate@pr-ci.test) at desired/netform.yaml:7)',
      ]);
      const invariant = await runAction(
        { command: 'check', check: 'no-access-to 10.20.0.0/16:22/tcp', format: 'json' },
        checkout,
      );
      expect(invariant.status, invariant.log).toBe(0);
      expect(JSON.parse(invariant.output)).toMatchObject({ result: 'pass' });
    });
  });

  describe('a live log, also when the apply is stopped or killed', () => {
    const USERS = 24;
    const HOSTILE = 'evil\n::error title=pwned::owned by the server\n::add-mask::netform';
    let proxy: TcpProxy;
    let ws: Workspace;
    let running: Awaited<ReturnType<typeof startAction>> | undefined;
    beforeAll(async () => {
      proxy = await startTcpProxy(server.url);
    });
    afterAll(async () => {
      await proxy.close();
    });
    afterEach(() => {
      running?.kill();
      running = undefined;
      ws?.cleanup();
    });

    /** A device made by hand with a hostile name, pruned by the files, which also add USERS users. */
    async function setUp(domain: string): Promise<void> {
      ws = workspace();
      const owner = await create(server, 'users', { email: `owner@${domain}` });
      await create(server, 'devices', { user_id: owner.id, name: HOSTILE, public_key: wgKey() });
      const users = Array.from({ length: USERS }, (_, i) => `  - email: u${String(i).padStart(2, '0')}@${domain}\n`);
      ws.write(
        'desired/netform.yaml',
        `version: 1\nsettings:\n  prune: true\n  manage: { users: ["*@${domain}"], rules: [] }\nusers:\n  - email: owner@${domain}\n${users.join('')}`,
      );
    }

    const start = () => {
      proxy.setDelay(150);
      return startAction(
        {
          command: 'apply',
          format: 'text',
          url: proxy.url,
          token: server.token,
          'token-user': TEST_ADMIN_EMAIL,
          args: '--parallelism 2',
        },
        ws.dir,
      );
    };

    /** The users the log says were created, each once; and those the server has. */
    async function createdAccordingTo(log: string, domain: string) {
      const logged = [
        ...log.matchAll(new RegExp(`^created user (u\\d\\d@${domain.replace('.', '\\.')}) \\(`, 'gm')),
      ].map((m) => m[1]!);
      expect(new Set(logged).size, 'each write is logged once').toBe(logged.length);
      const onServer = (await serverState(server)).users
        .map((u) => u.email as string)
        .filter((e) => e.startsWith('u') && e.endsWith(`@${domain}`));
      return { logged, onServer };
    }

    function expectInert(log: string): void {
      // The hostile name reached the log (today at the start of a line); the runner acts on none of it.
      expect(log).toContain('::error title=pwned::owned by the server');
      expect(workflowCommands(log)).toEqual({ issued: [], stoppedAtEnd: false });
    }

    it('a hard kill mid-apply: the log holds every write that settled, and no server value became a command', async () => {
      const domain = 'kill.test';
      await setUp(domain);
      running = await start();
      await running.waitFor(/^created user u\d\d@kill\.test \(/m, 4);
      process.kill(running.netformPid(), 'SIGKILL');
      const result = await running.finish();
      expect(result.status).toBe(137);
      expect(result.outputs['exit-code']).toBe('137');
      expect(result.log).toContain(
        'netform action: netform was killed (exit code 137): the writes listed above finished; those in flight may or may not have; netform plan shows where the server is',
      );
      expect(result.log).not.toMatch(SHELL_JOB_NOTICE);
      const { logged, onServer } = await createdAccordingTo(result.log, domain);
      expect(logged.length).toBeGreaterThanOrEqual(4);
      // Every write the log reports happened; the only ones it cannot report were in flight (2 at once).
      for (const email of logged) expect(onServer).toContain(email);
      expect(onServer.length - logged.length).toBeGreaterThanOrEqual(0);
      expect(onServer.length - logged.length).toBeLessThanOrEqual(2);
      expect(onServer.length).toBeLessThan(USERS);
      // The plan came first, then the writes, as they were made.
      expect(result.log.indexOf('Plan: 24 to create')).toBeLessThan(result.log.indexOf('created user'));
      expectInert(result.log);
    });

    for (const [signal, code] of [
      ['SIGINT', 130],
      ['SIGTERM', 143],
    ] as const) {
      it(`${signal} to the step's process group: netform gets it once, stops new writes, the summary follows the writes (exit ${code})`, async () => {
        const domain = `${signal.toLowerCase()}.test`;
        await setUp(domain);
        running = await start();
        await running.waitFor(new RegExp(`^created user u\\d\\d@${domain.replace('.', '\\.')} \\(`, 'm'), 2);
        process.kill(-running.child.pid!, signal);
        const result = await running.finish();
        expect(result.status, result.log).toBe(code);
        expect(result.log).toContain(`${signal}: starting no new writes`);
        expect(result.log).not.toContain(`${signal} again`);
        const summary = /Apply: (\d+) done, (\d+) failed, (\d+) not attempted\./.exec(result.log);
        expect(summary, result.log).not.toBeNull();
        const { logged, onServer } = await createdAccordingTo(result.log, domain);
        expect(onServer.sort()).toEqual([...logged].sort());
        expect(Number(summary![1])).toBe(logged.length);
        // In the order it happened: the plan, the writes, the interrupt, the summary, the last word.
        const at = (s: string) => result.log.indexOf(s);
        expect(at('Plan: 24 to create')).toBeLessThan(at('created user'));
        expect(at(`${signal}: starting no new writes`)).toBeLessThan(at('\nApply: '));
        expect(result.log.lastIndexOf('created user ')).toBeLessThan(at('\nApply: '));
        expect(at('\nApply: ')).toBeLessThan(at(`Interrupted by ${signal}.`));
        expectInert(result.log);
      });
    }
  });
});
