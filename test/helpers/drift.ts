/**
 * The drift end-to-end fixtures: a webhook receiver, and a `netform drift` process whose JSON
 * lines can be awaited.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { createServer as createHttpServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { builtCli } from './cli.js';
import type { DriftReport } from '../../src/drift/report.js';

export interface WebhookReceiver {
  url: string;
  received: { headers: IncomingHttpHeaders; text: string; report: DriftReport }[];
  /** Resolves when `count` reports have arrived. */
  waitForCount(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: WebhookReceiver['received'] = [];
  const events = new EventEmitter();
  const server = createHttpServer((req, res) => {
    let text = '';
    req
      .setEncoding('utf8')
      .on('data', (c: string) => (text += c))
      .on('end', () => {
        received.push({ headers: req.headers, text, report: JSON.parse(text) as DriftReport });
        res.writeHead(204).end();
        events.emit('report');
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/netform-drift/s3cr3t`,
    received,
    waitForCount: (count, timeoutMs = 20_000) =>
      waitUntil(events, 'report', () => received.length >= count, timeoutMs, `${count} webhook report(s)`),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function waitUntil(
  events: EventEmitter,
  event: string,
  done: () => boolean,
  timeoutMs: number,
  what: string,
  describe?: () => string,
): Promise<void> {
  return new Promise((resolve, reject) => {
    if (done()) return resolve();
    const timer = setTimeout(() => {
      events.off(event, check);
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}${describe ? `\n${describe()}` : ''}`));
    }, timeoutMs);
    const check = () => {
      if (!done()) return;
      clearTimeout(timer);
      events.off(event, check);
      resolve();
    };
    events.on(event, check);
  });
}

export interface DriftProcess {
  child: ChildProcess;
  reports: DriftReport[];
  stderr(): string;
  /** Resolves with the first report at or after index `from` that matches. */
  waitForReport(
    match: (r: DriftReport) => boolean,
    options?: { from?: number; timeoutMs?: number },
  ): Promise<DriftReport>;
  /** Resolves when stderr contains the text. */
  waitForStderr(text: string | RegExp, timeoutMs?: number): Promise<void>;
  /** Resolves with the exit code and signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL if still running (cleanup). */
  kill(): void;
}

export function startDrift(args: string[], env: Record<string, string | undefined> = {}, cwd?: string): DriftProcess {
  const fullEnv: Record<string, string | undefined> = {
    ...process.env,
    NO_COLOR: '1',
    NETFORM_URL: undefined,
    NETFORM_TOKEN: undefined,
    ...env,
  };
  for (const k of Object.keys(fullEnv)) if (fullEnv[k] === undefined) delete fullEnv[k];
  const child = spawn(process.execPath, [builtCli(), 'drift', ...args], {
    env: fullEnv as NodeJS.ProcessEnv,
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const events = new EventEmitter();
  const reports: DriftReport[] = [];
  let stdoutBuffer = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdoutBuffer += chunk;
    let newline: number;
    while ((newline = stdoutBuffer.indexOf('\n')) !== -1) {
      const line = stdoutBuffer.slice(0, newline);
      stdoutBuffer = stdoutBuffer.slice(newline + 1);
      // Every stdout line must be one JSON report: JSON.parse throws (and the test fails) otherwise.
      reports.push(JSON.parse(line) as DriftReport);
      events.emit('change');
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    events.emit('change');
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      events.emit('change');
      resolve({ code, signal });
    });
  });
  const describe = () => `stderr:\n${stderr}\nreports:\n${reports.map((r) => JSON.stringify(r)).join('\n')}`;
  return {
    child,
    reports,
    stderr: () => stderr,
    async waitForReport(match, options = {}) {
      const from = options.from ?? 0;
      const find = () => reports.slice(from).find(match);
      await waitUntil(
        events,
        'change',
        () => find() !== undefined || child.exitCode !== null,
        options.timeoutMs ?? 20_000,
        'a matching drift report',
        describe,
      );
      const found = find();
      if (!found) throw new Error(`drift exited (code ${child.exitCode}) before a matching report\n${describe()}`);
      return found;
    },
    waitForStderr(text, timeoutMs = 20_000) {
      const has = () => (typeof text === 'string' ? stderr.includes(text) : text.test(stderr));
      return waitUntil(events, 'change', has, timeoutMs, `stderr ${String(text)}`, describe);
    },
    exited,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** Seconds between two report times. */
export function reportTime(report: DriftReport): number {
  return Date.parse(report.time);
}
