/**
 * The safety net of issue W3.3: one table of every netform command × every failure path that
 * applies to it, run as real processes of the built CLI against real servers and small loopback
 * proxies that break the network on purpose. Every run carries every planted secret (the API
 * token, two passwords, two preshared keys, NETFORM_PLAN_KEY, a live device's preshared key, a
 * webhook's secret path, a PostgreSQL password) and meets hostile names (terminal escapes, OSC 52,
 * newline + `::error::`, the runner's old `##[command]` syntax, a markdown link and image, a bidi
 * override) from the server, from files and from a broken server's answers. Failure paths include
 * an output path that is already a symlink and operator files that are `/dev/zero`. Each cell asserts:
 *
 * - no planted secret in stdout, stderr, written files (saved plans, exports, drift reports),
 *   webhook bodies, or (at the end) the server's log;
 * - no stack trace, no "internal error", no inspected object, for failures that are expected;
 * - an `error:` line naming what failed (the daemon: its failed report says it);
 * - the documented exit code (or, for a signal before any write, the signal itself);
 * - nothing raw-hostile on a line: no control, bidi or zero-width character, no line netform did
 *   not mean starting with `::`, no `##[` anywhere, in markdown no link outside code;
 * - a symlink at an output path was replaced (or refused), its target never written.
 *
 * Adding a command is one entry in COMMANDS; adding a failure path is one entry in FAILURES.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import {
  cpSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import {
  createServer as createHttpServer,
  request as httpRequest,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, SHORT_LIVED_NODE } from '../../helpers/cli.js';
import { Spawner, type SpawnedCli } from '../../helpers/spawner.js';
import { startTestServer, TEST_ADMIN_EMAIL, type TestServer } from '../../helpers/server.js';
import { expectNoLinkOutsideCode, HOSTILE_MARKDOWN } from '../../helpers/inert.js';

/** Cells run at once (vitest's own limit for concurrent tests is 5; 2-core CI is CPU-bound beyond that). */
const CONCURRENCY = 5;
/** The longest wait for one event of a cell (a loaded CI machine can be slow to start a process). */
const WAIT_MS = 60_000;

// ---------------------------------------------------------------------------------------------
// Planted secrets and hostile names
// ---------------------------------------------------------------------------------------------

const hex = (n: number) => randomBytes(n).toString('hex');
const psk = () => randomBytes(32).toString('base64');
const PLANTED = {
  /** Set once the server exists: its admin token. */
  token: '',
  passwordFile: `pwFILE-${hex(10)}`,
  passwordEnv: `pwENV-${hex(10)}`,
  pskFile: psk(),
  pskEnv: psk(),
  pskTablet: psk(),
  /** A file outside the repository that a symlink in it points at. */
  outside: `outsideFILE-${hex(10)}`,
  planKey: `planKEY-${hex(16)}`,
  /** The preshared key of a device already on the server (export and show write references). */
  livePsk: psk(),
  webhookPath: `whsec-${hex(12)}`,
  pgPassword: `pgPASS-${hex(10)}`,
};

const MARKDOWN = HOSTILE_MARKDOWN;
/** Device names a user can give its own devices on a real server. */
const HOSTILE_NAMES = [
  'erase\u001b[2J\u001b[1A\u001b[2K',
  'clip\u001b]52;c;ZWNobyBwd25lZAo=\u0007\u001b]0;title\u0007',
  'laptop\n::error::pwned',
  `md${MARKDOWN}`,
  'bidi\u202Eexe.txt\u200b',
  'legacy ##[add-mask]x ##[error title=y]PR passed ##[stop-commands]tok',
];
/** What a broken server puts in its error answers, next to the Authorization header it echoes. */
const HOSTILE_ANSWER = `boom \u001b]52;c;cHduZWQ=\u0007\u202e\n::error::pwned ##[error]pwned ${MARKDOWN}`;

// ---------------------------------------------------------------------------------------------
// The table
// ---------------------------------------------------------------------------------------------

/** How a broken /v0 server (the proxy in front of the real one) behaves during the cell. */
type ProxyMode = 'pass' | 'cut' | 'echo500' | 'html500' | 'text200' | 'hold' | 'hold-writes' | 'hostile-rules';

/** A rule's port_type that would close its set and add a table, were it copied into a ruleset (review 2026-11b, G3). */
const HOSTILE_PORT_TYPE =
  'tcp . 80 }\n\t}\n}\ntable ip atk2evil {\n\tchain c {\n\t\ttype filter hook input priority 0; policy drop;\n\t}\n}\ntable inet firezone {\n\tset atkzz {\n\t\ttype ipv4_addr . inet_proto . inet_service\n\t\tflags interval\n\t\telements = { 10.0.0.0/8 . tcp';

/** What the cell expects the process to end with. */
type Ending =
  | { code: number }
  /** Ended by this signal before any write: either killed by it, or exit 128 + its number. */
  | { signal: 'SIGTERM' | 'SIGINT' };

interface Expectation {
  ending: Ending;
  /** Lines of stderr (or of the daemon's failed report) that must each match one: they name what failed. */
  error?: RegExp | RegExp[];
  /** The `error` line is any line of the output, not one from `error: …` on. */
  anywhere?: boolean;
  /** A line of the output that must match when there is no error (a warning, say). */
  warning?: RegExp;
}

interface Command {
  name: string;
  /** The arguments; `ctx.desired` is the desired-state folder, `ctx.out` an empty folder of the cell. */
  args(ctx: CellContext): string[];
  /** Talks to a /v0 server. */
  network: boolean;
  /** Reads the desired state (so file failures apply). */
  files: boolean;
  /** Exit code on the happy path. */
  ok: number;
  /** Standard output is JSON (values carried exactly: bidi characters may appear raw, controls never). */
  json?: boolean;
  markdown?: boolean;
  /** Lines starting `::` are netform's own GitHub annotations. */
  github?: boolean;
  /** Reports problems as `FILE:LINE:COL: message` lines (validate), not as `error: …`. */
  plain?: boolean;
  /** `drift --every`: runs until SIGTERM; what failed is in its JSON report lines. */
  daemon?: boolean;
  /** Writes to the server: the happy path and the abort get their own server. */
  writes?: boolean;
  /** Applies a saved plan made (through the proxy, working) before the failure starts. */
  saved?: boolean;
  /** A `netform server …`/`serve` command: its failures are about the database. */
  server?: boolean;
  /** Expectations that differ from the failure path's own for this command. */
  except?: Partial<Record<string, Expectation>>;
}

interface CellContext {
  desired: string;
  out: string;
  /** A saved plan (commands with `saved`). */
  planFile: string;
  /** The /v0 URL the cell uses (the proxy), or the --db of server commands. */
  db: string;
  webhook: string;
}

interface Failure {
  name: string;
  applies(command: Command): boolean;
  /** Which desired-state folder: the good one, one with broken files, one whose secret files cannot be read. */
  desired?: 'good' | 'bad' | 'secrets';
  env?: Record<string, string | undefined>;
  args?: string[];
  mode?: ProxyMode;
  /** The proxy stops listening: connections are refused. */
  refused?: boolean;
  /** For server commands: what --db is. */
  db?: 'pgRefused' | 'pgClosing' | 'underFile';
  /** Acts on the running process (a signal at the right moment). */
  during?(cell: RunningCell): Promise<void>;
  /** Output paths that must be symlinks to a victim file when the command starts. */
  linkedOutputs?(command: Command, ctx: CellContext): string[];
  expect(command: Command): Expectation;
}

const reads = (c: Command) => c.network && !c.server;
/** The file each command writes into its cell's folder (`-o`, `--report`). */
const OUTPUT_FILE: Record<string, string> = {
  'plan -o': 'plan.json',
  'export -o': join('export', 'netform.yaml'),
  'drift --every': 'report.json',
};
const readsFiles = (c: Command) => c.files && !c.server;

/** The failure paths (columns). */
const FAILURES: Failure[] = [
  {
    name: 'happy path',
    applies: () => true,
    expect: (c) => ({ ending: { code: c.ok } }),
  },
  {
    name: 'connection refused',
    applies: reads,
    refused: true,
    expect: (c) => ({ ending: { code: c.daemon ? 0 : 1 }, error: /connection refused by http:\/\/127\.0\.0\.1:\d+/ }),
  },
  {
    name: 'connection closed mid-list',
    applies: reads,
    mode: 'cut',
    expect: (c) => ({
      ending: { code: c.daemon ? 0 : 1 },
      error: /GET \/v0\/\w+: .*(dropped the connection|not valid JSON)/,
    }),
  },
  {
    name: '500 echoing the Authorization header',
    applies: reads,
    mode: 'echo500',
    expect: (c) => ({ ending: { code: c.daemon ? 0 : 1 }, error: /(GET|POST|PATCH|DELETE) \/v0\/\S+: 500 / }),
  },
  {
    name: '500 HTML page echoing the Authorization header',
    applies: reads,
    mode: 'html500',
    expect: (c) => ({ ending: { code: c.daemon ? 0 : 1 }, error: /\/v0\/\S+: 500 the answer is an HTML page/ }),
  },
  {
    name: '200 that is not JSON, echoing the Authorization header',
    applies: reads,
    mode: 'text200',
    expect: (c) => ({
      ending: { code: c.daemon ? 0 : 1 },
      error: /\/v0\/\S+: .*(not valid JSON|the answer is text\/plain|unexpected answer)/,
    }),
  },
  {
    name: 'slower than --timeout',
    applies: reads,
    mode: 'hold',
    args: ['--timeout', '1'],
    expect: (c) => ({
      ending: { code: c.daemon ? 0 : 1 },
      error: /no answer from http:\/\/127\.0\.0\.1:\d+ within 1(\.0)? s/,
    }),
  },
  {
    name: 'a server value that would become ruleset text',
    applies: (c) => c.name === 'nft --live',
    mode: 'hostile-rules',
    expect: () => ({ ending: { code: 1 }, error: /the server's rule "[^"]+" has port_type "tcp \. 80 }\\n\\t}/ }),
  },
  {
    name: 'SIGTERM while the server is slow',
    applies: reads,
    mode: 'hold',
    during: async (cell) => {
      await cell.held();
      cell.process.child.kill('SIGTERM');
    },
    expect: (c) => ({ ending: c.daemon ? { code: 0 } : { signal: 'SIGTERM' } }),
  },
  {
    name: 'SIGINT while the server is slow',
    applies: reads,
    mode: 'hold',
    during: async (cell) => {
      await cell.held();
      cell.process.child.kill('SIGINT');
    },
    expect: (c) => ({ ending: c.daemon ? { code: 0 } : { signal: 'SIGINT' } }),
  },
  {
    name: 'SIGINT mid-apply',
    applies: (c) => !!c.writes,
    mode: 'hold-writes',
    during: async (cell) => {
      await cell.held();
      cell.process.child.kill('SIGINT');
      await cell.process.waitForStderr('SIGINT: starting no new writes', WAIT_MS);
      cell.proxy!.release();
    },
    // Not an error: the summary, and a line saying what to do.
    expect: () => ({
      ending: { code: 130 },
      error:
        /^Interrupted by SIGINT\. Apply: 1 done, 0 failed, \d+ not attempted\. Running apply again finishes what is left/,
      anywhere: true,
    }),
  },
  {
    name: 'bad files (malformed YAML, schema error, duplicate)',
    applies: readsFiles,
    desired: 'bad',
    // Each problem is named with its file, the hostile name and key escaped (as text, or in a GitHub annotation).
    expect: () => ({
      ending: { code: 1 },
      error: [
        /bad\\u001b\]0;t\\u0007(\\u000a::|%0A%3A%3A)error(::|%3A%3A)x\\u202e\.yaml.*\d+.*YAML syntax/,
        /schema\.yaml.*\d+.*colour\\u001b\[2J\\(n|u000a)::error::pwned\\u202e.*unknown key/,
        // A file could not be parsed: the duplicate across declarations is not checked, and one line says so.
        /checks across files \(duplicates, .*\) were skipped because a file could not be read or parsed/,
      ],
    }),
  },
  {
    name: 'a secret variable not set',
    applies: readsFiles,
    env: { SAFETY_PASSWORD: undefined },
    // A password is read only when it is sent (W3.6): apply, which sends it (the user is created),
    // stops naming the variable; plan shows it as read at apply, not pinned (W4.7), and exits as any
    // plan does; validate, test and explain warn and go on; drift (and adopt, which plans as drift does) never reads a password, so it has
    // nothing to say about one.
    expect: (c) =>
      /^plan/.test(c.name)
        ? { ending: { code: c.ok } }
        : /^apply/.test(c.name)
          ? { ending: { code: 1 }, error: /SAFETY_PASSWORD is not set/ }
          : /^(drift|adopt)/.test(c.name)
            ? { ending: { code: c.daemon ? 0 : c.ok } }
            : { ending: { code: c.ok }, warning: /warning: .*SAFETY_PASSWORD is not set/ },
  },
  {
    name: 'secret files: a FIFO, a folder, a symlink out of the repository',
    applies: readsFiles,
    desired: 'secrets',
    expect: () => ({
      ending: { code: 1 },
      error: [
        /secret file secrets\/laptop\.psk is not a regular file \(it is a FIFO\)/,
        /secret file secrets\/tablet\.psk is not a regular file \(it is a folder\)/,
        /secret file secrets\/grace\.password is a symlink to a file outside the repository/,
      ],
    }),
  },
  {
    name: 'a symlink already at the output path',
    applies: (c) => c.name in OUTPUT_FILE,
    linkedOutputs: (c, ctx) => [join(ctx.out, OUTPUT_FILE[c.name]!)],
    // Replaced by the output (plan -o, drift --report); export -o refuses any file already there.
    expect: (c) =>
      c.name === 'export -o'
        ? { ending: { code: 1 }, error: /netform\.yaml already exist\(s\) in .*nothing was written/ }
        : { ending: { code: c.ok } },
  },
  {
    name: '--token-file /dev/zero',
    applies: reads,
    env: { NETFORM_TOKEN: undefined },
    args: ['--token-file', '/dev/zero'],
    expect: () => ({
      ending: { code: 1 },
      error: /--token-file: \/dev\/zero is not a regular file \(it is a device\)/,
    }),
  },
  {
    name: '--tls-cert and --tls-key /dev/zero',
    applies: (c) => c.name === 'serve',
    args: ['--tls-cert', '/dev/zero', '--tls-key', '/dev/zero'],
    expect: () => ({ ending: { code: 1 }, error: /--tls-cert: \/dev\/zero is not a regular file \(it is a device\)/ }),
  },
  {
    name: 'PostgreSQL refusing connections',
    applies: (c) => !!c.server,
    db: 'pgRefused',
    expect: () => ({
      ending: { code: 1 },
      error: /cannot connect to PostgreSQL at postgres:\/\/netform@127\.0\.0\.1:\d+\/netform/,
    }),
  },
  {
    name: 'PostgreSQL closing the connection',
    applies: (c) => !!c.server,
    db: 'pgClosing',
    expect: () => ({ ending: { code: 1 }, error: /PostgreSQL at postgres:\/\/netform@127\.0\.0\.1:\d+\/netform/ }),
  },
  {
    name: 'a database path under a regular file',
    applies: (c) => !!c.server,
    db: 'underFile',
    expect: () => ({ ending: { code: 1 }, error: /not-a-folder/ }),
  },
];

/** Offline commands accept an unset secret variable with a warning (it is needed by plan, apply and drift). */
const WARNS_ON_UNSET: Partial<Record<string, Expectation>> = {
  'a secret variable not set': {
    ending: { code: 0 },
    warning: /^(warning: |::warning ).*environment variable SAFETY_PASSWORD is not set/,
  },
};

/** The commands (rows). */
const COMMANDS: Command[] = [
  {
    name: 'validate',
    args: (x) => ['validate', '-f', x.desired],
    plain: true,
    network: false,
    files: true,
    ok: 0,
    except: WARNS_ON_UNSET,
  },
  {
    name: 'validate --format github',
    args: (x) => ['validate', '-f', x.desired, '--format', 'github'],
    plain: true,
    network: false,
    files: true,
    ok: 0,
    github: true,
    except: WARNS_ON_UNSET,
  },
  { name: 'plan', args: (x) => ['plan', '-f', x.desired], network: true, files: true, ok: 2 },
  {
    name: 'plan --format json',
    args: (x) => ['plan', '-f', x.desired, '--format', 'json'],
    network: true,
    files: true,
    ok: 2,
    json: true,
  },
  {
    name: 'plan --format markdown',
    args: (x) => ['plan', '-f', x.desired, '--format', 'markdown'],
    network: true,
    files: true,
    ok: 2,
    markdown: true,
  },
  {
    name: 'plan -o',
    args: (x) => ['plan', '-f', x.desired, '-o', join(x.out, 'plan.json')],
    network: true,
    files: true,
    ok: 2,
  },
  {
    name: 'apply -f',
    args: (x) => ['apply', '-f', x.desired, '--yes', '--parallelism', '1'],
    network: true,
    files: true,
    ok: 0,
    writes: true,
  },
  {
    name: 'apply PLANFILE',
    args: (x) => ['apply', x.planFile, '--parallelism', '1'],
    network: true,
    files: true,
    ok: 0,
    writes: true,
    saved: true,
    except: {
      // The bad file is the saved plan, edited by hand (a hostile label) and not sealed again.
      'bad files (malformed YAML, schema error, duplicate)': {
        ending: { code: 1 },
        error: /saved-plan\.json: the saved plan was modified after netform plan wrote it/,
      },
    },
  },
  { name: 'drift', args: (x) => ['drift', '-f', x.desired], network: true, files: true, ok: 2 },
  {
    name: 'drift --every',
    args: (x) => [
      'drift',
      '-f',
      x.desired,
      '--every',
      '0 0 1 1 *',
      '--run-at-start',
      '--webhook',
      x.webhook,
      '--report',
      join(x.out, 'report.json'),
    ],
    network: true,
    files: true,
    ok: 0,
    json: true,
    daemon: true,
  },
  {
    name: 'adopt --dry-run',
    args: (x) => ['adopt', '-f', x.desired, '--all-drift', '--dry-run'],
    network: true,
    files: true,
    ok: 0,
  },
  { name: 'export -o', args: (x) => ['export', '-o', join(x.out, 'export')], network: true, files: false, ok: 0 },
  { name: 'show', args: () => ['show'], network: true, files: false, ok: 0 },
  { name: 'test', args: (x) => ['test', '-f', x.desired], network: false, files: true, ok: 0 },
  { name: 'test --live', args: (x) => ['test', '-f', x.desired, '--live'], network: true, files: true, ok: 0 },
  {
    name: 'explain',
    args: (x) => ['explain', 'grace@example.com', '10.9.0.1', '-f', x.desired],
    network: false,
    files: true,
    ok: 0,
  },
  {
    name: 'explain --live',
    args: () => ['explain', 'mallory@example.com', '10.9.0.1', '--live'],
    network: true,
    files: false,
    ok: 0,
  },
  {
    name: 'nft',
    args: (x) => ['nft', '-f', x.desired],
    network: false,
    files: true,
    ok: 0,
    // The ruleset needs no secret: an unset one is not even mentioned.
    except: { 'a secret variable not set': { ending: { code: 0 } } },
  },
  { name: 'nft --live', args: () => ['nft', '--live'], network: true, files: false, ok: 0 },
  {
    name: 'serve',
    args: (x) => ['serve', '--port', '0', '--db', x.db],
    network: false,
    files: false,
    ok: 0,
    server: true,
  },
  {
    name: 'server token create',
    args: (x) => ['server', 'token', 'create', '--email', 'root@example.com', '--db', x.db],
    network: false,
    files: false,
    ok: 0,
    server: true,
  },
  {
    name: 'server copy',
    args: (x) => ['server', 'copy', '--from', shared.server.dbPath, '--to', x.db],
    network: false,
    files: false,
    ok: 0,
    server: true,
  },
];

// ---------------------------------------------------------------------------------------------
// Loopback stand-ins for a broken network
// ---------------------------------------------------------------------------------------------

const LIST_PATH = /^\/v0\/(users|devices|rules)(\?.*)?$/;

/**
 * An HTTP proxy in front of the real server whose behaviour the cell switches: pass everything;
 * cut list answers half-way and close the connection; answer 500 echoing the Authorization header
 * (JSON or an HTML page); hold every request (a server slower than any timeout); or pass reads and
 * hold writes until release(). Emits `held` for each request it holds.
 */
class FaultProxy extends EventEmitter {
  mode: ProxyMode = 'pass';
  heldCount = 0;
  /** Writes refused because the server behind is shared by cells that must not change it. */
  blockedWrites: string[] = [];
  allowWrites = true;
  readonly #held: (() => void)[] = [];
  readonly #server: HttpServer;
  url = '';

  constructor(readonly target: string) {
    super();
    this.#server = createHttpServer((req, res) => this.#handle(req, res));
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  /** Forwards the requests held so far (hold-writes). */
  release(): void {
    this.mode = 'pass';
    for (const forward of this.#held.splice(0)) forward();
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.#server.closeAllConnections();
      this.#server.close(() => resolve());
    });
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const auth = String(req.headers.authorization ?? '');
    if (!this.allowWrites && req.method !== 'GET' && (this.mode === 'pass' || this.mode === 'cut')) {
      this.blockedWrites.push(`${req.method} ${req.url}`);
      req.resume();
      res.writeHead(409, { 'content-type': 'application/json' }).end('{"error":"the safety net blocked a write"}');
      return;
    }
    switch (this.mode) {
      case 'echo500':
        req.resume();
        res.writeHead(500, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            error: `${HOSTILE_ANSWER} (you sent Authorization: ${auth})`,
            errors: { authorization: [auth], [HOSTILE_ANSWER]: [`${HOSTILE_ANSWER} ${auth}`] },
          }),
        );
        return;
      case 'html500':
        req.resume();
        res
          .writeHead(500, { 'content-type': 'text/html' })
          .end(`<html><body><h1>${HOSTILE_ANSWER}</h1><pre>Authorization: ${auth}</pre></body></html>`);
        return;
      case 'text200':
        req.resume();
        res.writeHead(200, { 'content-type': 'text/plain' }).end(`${HOSTILE_ANSWER}\nAuthorization: ${auth}\n`);
        return;
      case 'hold':
        this.#hold(() => undefined);
        return;
      case 'hostile-rules':
        if (req.method === 'GET' && (req.url ?? '').startsWith('/v0/rules')) {
          this.#forward(req, res, false, (body: any) => {
            for (const rule of body.data ?? []) rule.port_type = HOSTILE_PORT_TYPE;
            return body;
          });
          return;
        }
        break;
      case 'hold-writes':
        // The /v0 writes; a saved plan's claim on netform's own server (outside /v0) goes through first.
        if (req.method !== 'GET' && (req.url ?? '').startsWith('/v0/')) {
          this.#hold(() => this.#forward(req, res, false));
          return;
        }
        break;
      default:
        break;
    }
    this.#forward(req, res, this.mode === 'cut' && req.method === 'GET' && LIST_PATH.test(req.url ?? ''));
  }

  #hold(later: () => void): void {
    this.#held.push(later);
    this.heldCount++;
    this.emit('held');
  }

  #forward(req: IncomingMessage, res: ServerResponse, cut: boolean, rewrite?: (body: any) => any): void {
    const upstream = new URL(this.target);
    const forward = httpRequest(
      { host: upstream.hostname, port: Number(upstream.port), method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        if (rewrite) {
          // The JSON answer, rewritten (a hostile or intercepted server).
          const chunks: Buffer[] = [];
          answer.on('data', (c: Buffer) => chunks.push(c));
          answer.on('end', () => {
            const headers = { ...answer.headers };
            delete headers['content-length'];
            delete headers['transfer-encoding'];
            res.writeHead(answer.statusCode ?? 502, headers);
            res.end(JSON.stringify(rewrite(JSON.parse(Buffer.concat(chunks).toString('utf8')))));
          });
          return;
        }
        if (!cut) {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          return;
        }
        // The head and half of the list, then the connection closes.
        const chunks: Buffer[] = [];
        answer.on('data', (c: Buffer) => chunks.push(c));
        answer.on('end', () => {
          const body = Buffer.concat(chunks);
          const headers = { ...answer.headers };
          delete headers['content-length'];
          headers['transfer-encoding'] = 'chunked';
          res.writeHead(answer.statusCode ?? 502, headers);
          res.write(body.subarray(0, Math.floor(body.length / 2)), () => res.socket?.destroy());
        });
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  }
}

/** A TCP listener that closes every connection as soon as it is made (a database going away). */
async function startClosingListener(): Promise<{ port: number; close(): Promise<void> }> {
  const server: TcpServer = createTcpServer((socket: Socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A port nothing listens on (taken from the OS, then released). */
async function closedPort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Receives drift's webhooks, each on the path of its cell. */
class WebhookReceiver {
  readonly bodies = new Map<string, string[]>();
  readonly events = new EventEmitter();
  readonly #server = createHttpServer((req, res) => {
    let text = '';
    req
      .setEncoding('utf8')
      .on('data', (c: string) => (text += c))
      .on('end', () => {
        const list = this.bodies.get(req.url ?? '') ?? [];
        list.push(text);
        this.bodies.set(req.url ?? '', list);
        res.writeHead(204).end();
        this.events.emit('body', req.url);
      });
  });
  url = '';

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.#server.closeAllConnections();
      this.#server.close(() => resolve());
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Shared setup: one server for all cells that do not write, folders of desired state
// ---------------------------------------------------------------------------------------------

const shared = {} as {
  server: TestServer;
  dir: string;
  folders: Record<'good' | 'bad' | 'secrets', string>;
  /** A file outside the repository, holding a secret. */
  outside: string;
  hook: WebhookReceiver;
  closing: { port: number; close(): Promise<void> };
  refusedPort: number;
  notAFolder: string;
};

/** Creates the hostile objects on a server: mallory's devices (one with a preshared key) and a markdown email. */
async function seed(server: TestServer): Promise<void> {
  const mallory = await server.api('POST', '/v0/users', { user: { email: 'mallory@example.com' } });
  expect(mallory.status, JSON.stringify(mallory.body)).toBe(201);
  for (const [i, name] of HOSTILE_NAMES.entries()) {
    const device = await server.api('POST', '/v0/devices', {
      device: {
        user_id: mallory.body.data.id,
        name,
        description: `about ${name}`,
        public_key: psk(),
        ...(i === 0 ? { preshared_key: PLANTED.livePsk } : {}),
      },
    });
    expect(device.status, JSON.stringify(device.body)).toBe(201);
  }
  const marked = await server.api('POST', '/v0/users', { user: { email: `${MARKDOWN}@example.com` } });
  expect(marked.status, JSON.stringify(marked.body)).toBe(201);
  const rule = await server.api('POST', '/v0/rules', {
    rule: { user_id: marked.body.data.id, destination: '10.50.0.0/16', action: 'accept' },
  });
  expect(rule.status).toBe(201);
}

const DESIRED = [
  'version: 1',
  'settings: { prune: true, limits: { delete: 100%, update: 100% } }',
  'users:',
  `  - { email: ${TEST_ADMIN_EMAIL}, role: admin }`,
  '  - email: grace@example.com',
  '    password: { file: secrets/grace.password }',
  '    devices:',
  `      - { name: laptop, public_key: "${psk()}", preshared_key: { file: secrets/laptop.psk } }`,
  `      - { name: phone, public_key: "${psk()}", preshared_key: { env: SAFETY_PSK } }`,
  `      - { name: tablet, public_key: "${psk()}", preshared_key: { file: secrets/tablet.psk } }`,
  '    rules:',
  '      - { action: accept, destination: 10.9.0.0/16 }',
  '  - email: heidi@example.com',
  '    password: { env: SAFETY_PASSWORD }',
  '  - email: mallory@example.com',
  'tests:',
  '  - { name: mallory reaches the default, from: mallory@example.com/*, to: 10.9.0.1, expect: accept }',
  '',
].join('\n');

/** A file that is not YAML, under a hostile name. */
const BAD_FILE_NAME = 'bad\u001b]0;t\u0007\n::error::x\u202e.yaml';
const BAD_FILE = 'version: 1\nusers:\n  - email: eve@example.com\n  - email: [broken@example.com\n';
/** A file with a hostile unknown key and a user declared twice. */
const SCHEMA_FILE = [
  'version: 1',
  'users:',
  '  - email: eve@example.com',
  '    "colour\\e[2J\\n::error::pwned\\u202e": blue',
  '  - email: grace@example.com',
  '',
].join('\n');

function writeDesired(folder: string): void {
  mkdirSync(join(folder, 'secrets'), { recursive: true });
  writeFileSync(join(folder, 'netform.yaml'), DESIRED);
  writeFileSync(join(folder, 'secrets', 'grace.password'), `${PLANTED.passwordFile}\n`);
  writeFileSync(join(folder, 'secrets', 'laptop.psk'), `${PLANTED.pskFile}\n`);
  writeFileSync(join(folder, 'secrets', 'tablet.psk'), `${PLANTED.pskTablet}\n`);
}

/** Secret files of a desired-state folder made unreadable: a FIFO, a folder, a symlink out of the repository. */
function breakSecretFiles(folder: string): void {
  const secret = (name: string) => join(folder, 'secrets', name);
  for (const name of ['laptop.psk', 'tablet.psk', 'grace.password']) rmSync(secret(name));
  execFileSync('mkfifo', [secret('laptop.psk')]);
  mkdirSync(secret('tablet.psk'));
  symlinkSync(shared.outside, secret('grace.password'));
}

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'netform-safety-net-'));
  const [server, hook, closing, refusedPort] = await Promise.all([
    startTestServer({ logLevel: 'trace' }),
    new WebhookReceiver().listen(),
    startClosingListener(),
    closedPort(),
  ]);
  Object.assign(shared, { server, dir, hook, closing, refusedPort });
  PLANTED.token = server.token;
  // The desired state lives in a git repository (secret files must lie inside it).
  execFileSync('git', ['init', '-q', dir]);
  shared.outside = join(mkdtempSync(join(tmpdir(), 'netform-safety-net-outside-')), 'secret.password');
  writeFileSync(shared.outside, `${PLANTED.outside}\n`);
  const folders = { good: join(dir, 'good'), bad: join(dir, 'bad'), secrets: join(dir, 'secrets') };
  writeDesired(folders.good);
  cpSync(folders.good, folders.bad, { recursive: true });
  writeFileSync(join(folders.bad, BAD_FILE_NAME), BAD_FILE);
  writeFileSync(join(folders.bad, 'schema.yaml'), SCHEMA_FILE);
  writeDesired(folders.secrets);
  breakSecretFiles(folders.secrets);
  shared.folders = folders;
  shared.notAFolder = join(dir, 'not-a-folder');
  writeFileSync(shared.notAFolder, 'a regular file\n');
  await seed(server);
}, 60_000);

afterAll(async () => {
  await Promise.all([shared.server?.stop(), shared.hook?.close(), shared.closing?.close(), spawner.close()]);
  if (shared.dir) rmSync(shared.dir, { recursive: true, force: true });
  if (shared.outside) rmSync(dirname(shared.outside), { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// Running one cell
// ---------------------------------------------------------------------------------------------

interface RunningCell {
  process: SpawnedCli;
  proxy?: FaultProxy;
  /** Resolves once the proxy holds a request. */
  held(): Promise<void>;
}

/** Starts the cells' processes (test/helpers/spawner.ts). */
const spawner = new Spawner();

/** At most CONCURRENCY cells at once. */
const slots = (() => {
  let free = CONCURRENCY;
  const waiting: (() => void)[] = [];
  return {
    async run<T>(work: () => Promise<T>): Promise<T> {
      if (free === 0) await new Promise<void>((resolve) => waiting.push(resolve));
      else free--;
      try {
        return await work();
      } finally {
        const next = waiting.shift();
        if (next) next();
        else free++;
      }
    },
  };
})();

/** What a file an output path links to holds, before and after the cell. */
const VICTIM_TEXT = 'echo original script\n';

function cellEnv(failure: Failure, url: string, token: string): Record<string, string | undefined> {
  return {
    NETFORM_URL: url,
    NETFORM_TOKEN: token,
    NETFORM_TOKEN_USER: TEST_ADMIN_EMAIL,
    NETFORM_PLAN_KEY: PLANTED.planKey,
    NETFORM_RETRIES: '1',
    // Retries still happen (and print their lines), without waiting long between them.
    NETFORM_RETRY_DELAY_MS: '20',
    NETFORM_DEBUG: undefined,
    NETFORM_DB: undefined,
    SAFETY_PSK: PLANTED.pskEnv,
    SAFETY_PASSWORD: PLANTED.passwordEnv,
    ...failure.env,
  };
}

function filesUnder(folder: string): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  for (const entry of readdirSync(folder, { recursive: true, encoding: 'utf8' })) {
    const path = join(folder, entry);
    // Database files (serve, server …) hold secrets by design; they are not output.
    if (lstatSync(path).isFile() && !/\.db(-wal|-shm|-journal)?$/.test(entry))
      out.push({ path: entry, text: readFileSync(path, 'utf8') });
  }
  return out;
}

function waitFor(emitter: EventEmitter, event: string, done: () => boolean, what: string, ms = WAIT_MS): Promise<void> {
  return new Promise((resolve, reject) => {
    if (done()) return resolve();
    const timer = setTimeout(() => {
      emitter.off(event, check);
      reject(new Error(`timed out waiting for ${what}`));
    }, ms);
    const check = () => {
      if (!done()) return;
      clearTimeout(timer);
      emitter.off(event, check);
      resolve();
    };
    emitter.on(event, check);
  });
}

interface CellOutcome {
  /** The token the cell used (a server of its own has its own). */
  token: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  files: { path: string; text: string }[];
  webhooks: string[];
}

async function runCell(command: Command, failure: Failure, id: string): Promise<CellOutcome> {
  const out = join(shared.dir, 'cells', id);
  mkdirSync(out, { recursive: true });
  const own = command.writes && (failure.name === 'happy path' || failure.mode === 'hold-writes');
  const server = own ? await startTestServer() : shared.server;
  let proxy: FaultProxy | undefined;
  let running: SpawnedCli | undefined;
  try {
    if (own) await seed(server);
    let db = '';
    if (command.server) {
      const pg = (port: number) => `postgres://netform:${PLANTED.pgPassword}@127.0.0.1:${port}/netform`;
      if (failure.db === 'pgRefused') db = pg(shared.refusedPort);
      else if (failure.db === 'pgClosing') db = pg(shared.closing.port);
      else if (failure.db === 'underFile') db = join(shared.notAFolder, 'netform.db');
      else db = join(out, 'netform.db');
    }
    if (command.network) {
      proxy = await new FaultProxy(server.url).listen();
      proxy.allowWrites = !!own;
    }
    const webhookPath = `/hook/${id}/${PLANTED.webhookPath}`;
    const ctx: CellContext = {
      desired: shared.folders[failure.desired ?? 'good'],
      out,
      planFile: join(out, 'saved-plan.json'),
      db,
      webhook: `${shared.hook.url}${webhookPath}`,
    };
    const env = cellEnv(failure, proxy?.url ?? '', server.token);
    if (command.saved) {
      // The plan is made while everything works, from a copy of the good files; the failure comes at apply.
      const copy = join(shared.dir, 'saved', id);
      mkdirSync(join(shared.dir, 'saved'), { recursive: true });
      cpSync(shared.folders.good, copy, { recursive: true });
      // Made in this process (the cell's process is the apply).
      const made = await runCli(['plan', '-f', copy, '-o', ctx.planFile], {
        env: cellEnv({ name: 'prep' } as Failure, proxy!.url, server.token),
        cwd: shared.dir,
      });
      expect(made.code, `the saved plan: ${made.stderr}`).toBe(2);
      if (failure.desired === 'bad') {
        // Edited by hand: a hostile label, the seal left as it was.
        const plan = JSON.parse(readFileSync(ctx.planFile, 'utf8')) as { changes: { label?: string }[] };
        plan.changes[0]!.label = HOSTILE_ANSWER;
        // (`##[` written as JSON's `\u0023` escape: the file, which the cell's checks read too, is this test's own.)
        writeFileSync(ctx.planFile, JSON.stringify(plan).replace(/##\[/g, '#\\u0023['));
      }
      if (failure.desired === 'secrets') breakSecretFiles(copy);
    }
    const linked = failure.linkedOutputs?.(command, ctx) ?? [];
    const victim = join(shared.dir, 'victims', `${id}.sh`);
    if (linked.length > 0) {
      mkdirSync(dirname(victim), { recursive: true });
      writeFileSync(victim, VICTIM_TEXT);
      for (const path of linked) {
        mkdirSync(dirname(path), { recursive: true });
        symlinkSync(victim, path);
      }
    }
    if (proxy && failure.mode) proxy.mode = failure.mode;
    if (proxy && failure.refused) await proxy.close();
    // In the repository: a saved plan's secret files are read within the repository apply runs in.
    // Each cell's process lives about a second: V8's optimizing compiler off (SHORT_LIVED_NODE) saves its CPU.
    // Started by the spawner: a fork from this worker costs it tens of ms of CPU each, its event loop blocked.
    running = spawner.startCli(SHORT_LIVED_NODE, [...command.args(ctx), ...(failure.args ?? [])], {
      env,
      cwd: shared.dir,
    });
    const proc = running;
    const cell: RunningCell = {
      process: proc,
      proxy,
      held: () => waitFor(proxy!, 'held', () => proxy!.heldCount > 0, `${id}: a request reaching the proxy`),
    };
    if (command.name === 'serve' && failure.name === 'happy path') {
      await proc.waitForStdout(/^listening on http/, WAIT_MS);
      proc.child.kill('SIGTERM');
    }
    await failure.during?.(cell);
    if (command.daemon && !failure.during) {
      // The first run's report (a JSON line), then the stop.
      // (A file failure may end it at start, before any report.)
      await proc.waitForStdout(/\n/, WAIT_MS).catch(() => undefined);
      if (failure.name === 'happy path') {
        await waitFor(
          shared.hook.events,
          'body',
          () => (shared.hook.bodies.get(webhookPath)?.length ?? 0) > 0,
          `${id}: a webhook`,
        );
      }
      proc.child.kill('SIGTERM');
    }
    const exit = await running.exited;
    expect(proxy?.blockedWrites ?? [], `${id}: writes to the shared server`).toEqual([]);
    for (const path of linked) {
      expect(readFileSync(victim, 'utf8'), `${id}: the target of the link at ${path}`).toBe(VICTIM_TEXT);
      // Replaced by the output, or (export -o) refused and left as it was.
      if (command.name !== 'export -o')
        expect(lstatSync(path).isSymbolicLink(), `${id}: ${path} is still a link`).toBe(false);
    }
    return {
      ...exit,
      token: server.token,
      stdout: running.stdout(),
      stderr: running.stderr(),
      files: filesUnder(out),
      webhooks: shared.hook.bodies.get(webhookPath) ?? [],
    };
  } finally {
    running?.kill();
    proxy?.release();
    await proxy?.close();
    if (own) {
      const log = server.stderr();
      await server.stop();
      expectNoSecret(log, `${id}: the log of its own server`, server.token);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// What every cell must hold
// ---------------------------------------------------------------------------------------------

function secrets(token: string): [string, string][] {
  return [
    ...Object.entries(PLANTED),
    ["the cell's token", token],
    // Any long part of the token is as bad as the whole.
    ['token (last 16 characters)', token.slice(-16)],
  ];
}

function expectNoSecret(text: string, where: string, token = PLANTED.token): void {
  // One assertion per text over every secret (tens of thousands of expect calls over the table otherwise).
  const all = secrets(token);
  expect(
    all.filter(([, value]) => value.length <= 8).map(([name]) => name),
    'secrets of 8 characters or fewer',
  ).toEqual([]);
  expect(
    all.filter(([, value]) => text.includes(value)).map(([name]) => name),
    `${where} holds the planted secrets`,
  ).toEqual([]);
}

/** No stack, no inspected object, no internal error. */
function expectNoCrash(text: string, where: string): void {
  expect(text, `${where}: a stack trace`).not.toMatch(/^\s+at .+[:(]\d+/m);
  expect(text, `${where}: internal error`).not.toMatch(
    /internal error|node:internal|node:events|Unhandled|\[object Object\]/,
  );
  expect(text, `${where}: an inspected error`).not.toMatch(/\b\w*Error \{|authorization: '|headers: \{/i);
}

/** Lines a terminal or CI log can show: no control, bidi or zero-width character; no `::` line unless it is ours. */
function expectInertLines(text: string, where: string, options: { json?: boolean; github?: boolean } = {}): void {
  // JSON carries values exactly (bidi and zero-width characters as they are), but never a raw control.
  // A tab is allowed (nft indents with tabs).
  const forbidden = options.json
    ? /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/
    : /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ufeff]/;
  const raw = forbidden.exec(text);
  expect(
    raw,
    `${where}: raw U+${raw?.[0].codePointAt(0)?.toString(16)} near ${JSON.stringify(text.slice(Math.max(0, (raw?.index ?? 0) - 40), (raw?.index ?? 0) + 20))}`,
  ).toBeNull();
  // The runner's old syntax is read anywhere in a line: no output holds it (JSON writes it #\u0023[).
  expect(
    text.includes('##['),
    `${where}: an old-style workflow command (##[) near ${JSON.stringify(text.slice(Math.max(0, text.indexOf('##[') - 40), text.indexOf('##[') + 40))}`,
  ).toBe(false);
  // One assertion per rule over all lines (an expect call per line costs more than the check).
  const lines = text.split('\n');
  // A value from a server or a file never begins a line, escaped or not.
  expect(
    lines.filter((line) => /^\W{0,8}error::pwned/.test(line)),
    `${where}: lines begun by a hostile value`,
  ).toEqual([]);
  const annotation = /^::(error|warning|notice)( [a-z]+=[^:,]*(,[a-z]+=[^:,]*)*)?::[^\r]*$/;
  expect(
    lines.filter((line) => line.trimStart().startsWith('::') && !(options.github && annotation.test(line))),
    `${where}: workflow commands`,
  ).toEqual([]);
}

/** Outside code spans and fences, no link or image of the hostile values. */
function expectMarkdownInert(markdown: string, where: string): void {
  expectNoLinkOutsideCode(markdown, where);
}

function expectEnding(outcome: CellOutcome, ending: Ending, where: string): void {
  if ('code' in ending) {
    expect(outcome.code, where).toBe(ending.code);
    return;
  }
  const number = ending.signal === 'SIGTERM' ? 15 : 2;
  const ended = outcome.signal === ending.signal || outcome.code === 128 + number;
  expect(ended, `${where}: ended by ${outcome.signal ?? `exit ${outcome.code}`}`).toBe(true);
}

function check(command: Command, failure: Failure, outcome: CellOutcome): void {
  const expected = command.except?.[failure.name] ?? failure.expect(command);
  const where = `${command.name} × ${failure.name}\n--- exit ${outcome.code ?? outcome.signal}\n--- stdout\n${outcome.stdout.slice(0, 3000)}\n--- stderr\n${outcome.stderr.slice(0, 3000)}\n---`;
  const expectedCode = 'code' in expected.ending ? expected.ending.code : -1;
  expectEnding(outcome, expected.ending, where);

  const texts: [string, string][] = [
    ['stdout', outcome.stdout],
    ['stderr', outcome.stderr],
    ...outcome.files.map((f): [string, string] => [`file ${f.path}`, f.text]),
    ...outcome.webhooks.map((w, i): [string, string] => [`webhook body ${i}`, w]),
  ];
  for (const [name, text] of texts) {
    expectNoSecret(text, `${where} ${name}`, outcome.token);
    expectNoCrash(text, `${where} ${name}`);
  }
  expectInertLines(outcome.stderr, `${where} stderr`);
  expectInertLines(outcome.stdout, `${where} stdout`, { json: command.json, github: command.github });
  if (command.markdown) expectMarkdownInert(outcome.stdout, `${where} stdout`);
  for (const body of outcome.webhooks) {
    const { text } = JSON.parse(body) as { text: string };
    expectInertLines(text, `${where} webhook text`);
    // One line, unless the check failed (its message's own lines, none begun by a value: checked above).
    if (!text.includes('the check failed')) expect(text, `${where} webhook text`).not.toContain('\n');
    // Slack (the default format) links and mentions only with < and >, written as entities.
    expect(text, `${where} webhook text`).not.toMatch(/[<>]/);
  }
  for (const file of outcome.files) {
    if (file.path.endsWith('.json')) expectInertLines(file.text, `${where} ${file.path}`, { json: true });
    else expectInertLines(file.text, `${where} ${file.path}`);
  }

  // What failed is named: on an `error:` line (and what follows it), or in the daemon's failed report.
  if (expected.error) {
    let lines: string[];
    if (command.daemon && outcome.code === 0) {
      const reports = outcome.stdout
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const failed = reports.find((r) => r.status === 'failed');
      expect(failed, `${where}: a failed report`).toBeDefined();
      lines = [String(failed!.error), ...outcome.stderr.split('\n')];
    } else if (command.plain || expected.anywhere) {
      lines = `${outcome.stdout}\n${outcome.stderr}`.split('\n');
    } else {
      expect(outcome.stderr, `${where}: an error: line`).toMatch(/^error: /m);
      lines = outcome.stderr.slice(outcome.stderr.search(/^error: /m)).split('\n');
    }
    for (const pattern of [expected.error].flat()) {
      expect(
        lines.some((l) => pattern.test(l)),
        `${where}: a line names ${String(pattern)}`,
      ).toBe(true);
    }
  } else if (expectedCode === 0 || expectedCode === 2) {
    expect(outcome.stderr, `${where}: no error on success`).not.toMatch(/^error: /m);
  }
  if (expected.warning) {
    const lines = `${outcome.stdout}\n${outcome.stderr}`.split('\n');
    expect(
      lines.some((l) => expected.warning!.test(l)),
      `${where}: a line matches ${String(expected.warning)}`,
    ).toBe(true);
  }
}

// ---------------------------------------------------------------------------------------------
// The table, run
// ---------------------------------------------------------------------------------------------

const CELLS = COMMANDS.flatMap((command) =>
  FAILURES.filter((failure) => failure.applies(command)).map((failure) => ({ command, failure })),
);

describe(`safety net: ${COMMANDS.length} commands × ${FAILURES.length} failure paths (${CELLS.length} cells) × ${Object.keys(PLANTED).length} planted secrets`, () => {
  for (const [i, { command, failure }] of CELLS.entries()) {
    it.concurrent(`${command.name} × ${failure.name}`, { timeout: 120_000 }, async () => {
      const outcome = await slots.run(() => runCell(command, failure, `c${i}`));
      check(command, failure, outcome);
    });
  }
});

describe('the server behind every cell', () => {
  it('logged no planted secret and no stack', async () => {
    // Runs after the table (vitest runs describe blocks in order; concurrent tests of the first block finish first).
    const log = shared.server.stderr();
    expect(log).toContain('/v0/devices');
    expectNoSecret(log, 'the server log');
    expect(log).not.toMatch(/^\s+at /m);
  });
});
