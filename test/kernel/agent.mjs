/**
 * The kernel suite's agent: one runs inside each network namespace of the lab (started with
 * `ip netns exec NAME node agent.mjs`), reads one JSON command a line on stdin and answers one
 * JSON line on stdout. It sends the probe packets from its namespace and runs nft there.
 *
 *   {"id":1,"cmd":"send","probes":[{"kind":"tcp"|"udp"|"gre","src":"10.3.2.2","dst":"1.2.3.4","port":443,"sport":20001}]}
 *   {"id":2,"cmd":"trigger","triggers":[{"src":"1.2.3.4","dst":"10.3.2.2","sport":10001}]}
 *   {"id":3,"cmd":"nft","args":["-f","-"],"stdin":"..."}
 *   {"id":4,"cmd":"nfti","line":"flush set inet probe at_l4_4"}
 *   {"id":5,"cmd":"nftlist","table":"inet probe"}
 *   {"id":6,"cmd":"reset"}
 *
 * `send` answers once every packet is handed to the kernel. GRE packets (IP protocol 47: a bare
 * GRE header) and TCP SYNs or UDP datagrams to port 0 (which the socket API refuses to send) go
 * out through raw sockets of a python3 process of the agent's, headers written by hand. `trigger` sends a UDP datagram from
 * `src` (any address: ip_nonlocal_bind) to port 9 of the device address `dst`, whose namespace
 * answers with an ICMP port unreachable from `dst` to `src`: the ICMP probe. `nft` runs nft once;
 * `nfti` gives a line to a long-running `nft -j -i` (no process start per command) and answers its
 * JSON output lines; `nftlist` lists one table there. It refuses to start in
 * the namespace the suite runs in (NETFORM_LAB_HOST_NETNS, that namespace's inode).
 */
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { statSync } from 'node:fs';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';

const host = process.env.NETFORM_LAB_HOST_NETNS;
const own = String(statSync('/proc/self/ns/net').ino);
if (!host || host === own) {
  process.stderr.write('agent: refusing to run outside a namespace of its own\n');
  process.exit(2);
}

/** Sockets of the last probes, closed before the next ones. */
let open = [];

function reset() {
  for (const socket of open) socket.destroy();
  open = [];
}

function family(address) {
  return address.includes(':') ? 6 : 4;
}

function sendUdp(src, sport, dst, port) {
  return new Promise((resolve, reject) => {
    const socket = createSocket({ type: family(src) === 6 ? 'udp6' : 'udp4' });
    socket.on('error', reject);
    socket.bind({ address: src, port: sport, exclusive: true }, () => {
      socket.send(Buffer.from('netform probe'), port, dst, (error) => {
        socket.close();
        if (error) reject(error);
        else resolve();
      });
    });
  });
}

function sendTcp(src, sport, dst, port) {
  const socket = connect({ host: dst, port, localAddress: src, localPort: sport, family: family(dst) });
  // Refused, reset or never answered: the verdict is read where the SYN arrives, not here.
  socket.on('error', () => {});
  open.push(socket);
}

/**
 * A long-running python3 (started on first use) that sends one JSON line of probes at a time, each
 * through a raw socket of its IP protocol with the transport header written here (checksums left
 * 0: nothing on the way verifies them), and answers each line with one line.
 */
const RAW_SENDER = `
import json, socket, struct, sys
for line in sys.stdin:
    for p in json.loads(line):
        six = ':' in p['src']
        number = {'gre': 47, 'tcp': 6, 'udp': 17}[p['kind']]
        if p['kind'] == 'gre':
            header = struct.pack('!HH', 0, 0x0800)
        elif p['kind'] == 'tcp':
            header = struct.pack('!HHIIBBHHH', p['sport'], p['port'], 1, 0, 5 << 4, 0x02, 64240, 0, 0)
        else:
            header = struct.pack('!HHHH', p['sport'], p['port'], 8, 0)
        s = socket.socket(socket.AF_INET6 if six else socket.AF_INET, socket.SOCK_RAW, number)
        s.bind((p['src'], 0))
        s.sendto(header, (p['dst'], 0))
        s.close()
    print('sent', flush=True)
`;

let rawSender;
function sendRaw(probes) {
  if (!rawSender) {
    const child = spawn('python3', ['-c', RAW_SENDER], { stdio: ['pipe', 'pipe', 'pipe'] });
    rawSender = { child, stderr: '', waiting: [] };
    child.stderr.setEncoding('utf8').on('data', (c) => (rawSender.stderr += c));
    child.stdin.on('error', () => {});
    createInterface({ input: child.stdout }).on('line', () => rawSender.waiting.shift()?.resolve());
    child.on('close', (code) => {
      for (const w of rawSender.waiting)
        w.reject(new Error(`python3 raw sender exited (${code}): ${rawSender.stderr}`));
      rawSender.waiting = [];
    });
  }
  return new Promise((resolve, reject) => {
    rawSender.waiting.push({ resolve, reject });
    rawSender.child.stdin.write(`${JSON.stringify(probes)}\n`);
  });
}

async function send(probes) {
  reset();
  const udp = [];
  const raw = probes.filter((p) => p.kind === 'gre' || p.port === 0);
  if (raw.length > 0) udp.push(sendRaw(raw));
  for (const p of probes) {
    if (p.kind === 'gre' || p.port === 0) continue;
    if (p.kind === 'tcp') sendTcp(p.src, p.sport, p.dst, p.port);
    else udp.push(sendUdp(p.src, p.sport, p.dst, p.port));
  }
  await Promise.all(udp);
  // connect() runs on the next tick; after it every SYN is in the kernel.
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  return { sent: probes.length };
}

async function trigger(triggers) {
  await Promise.all(triggers.map((t) => sendUdp(t.src, t.sport, t.dst, 9)));
  return { sent: triggers.length };
}

function nft(args, stdin) {
  return new Promise((resolve) => {
    const child = spawn('nft', args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
    child.on('error', (error) => resolve({ code: -1, stdout, stderr: String(error) }));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.on('error', () => {});
    child.stdin.end(stdin ?? '');
  });
}

/**
 * One `nft -j -i` for the agent's life, given one job at a time. A job's line is followed by a
 * listing of the empty table `inet sync`, whose answer marks the end of that line's output. A
 * listing of one table (`nftlist`) needs no such mark: its answer is one JSON line; should nft
 * write to stderr instead, the mark is asked for after all, so that nothing it writes late is
 * taken for the next job's answer.
 */
let interactive;
const SYNC = /"table": \{"family": "inet", "name": "sync"/;
function startInteractive() {
  const child = spawn('nft', ['-j', '-i'], { stdio: ['pipe', 'pipe', 'pipe'] });
  interactive = { child, stderr: '', output: [], queue: [], job: null };
  child.stderr.setEncoding('utf8').on('data', (c) => {
    interactive.stderr += c;
    const job = interactive.job;
    if (job?.kind === 'list' && !job.synced) {
      job.synced = true;
      child.stdin.write('list table inet sync\n');
    }
  });
  child.stdin.on('error', () => {});
  createInterface({ input: child.stdout }).on('line', (out) => {
    const job = interactive.job;
    if (!job) return;
    const marked = SYNC.test(out);
    if (!marked) interactive.output.push(out);
    if (marked || (job.kind === 'list' && !job.synced)) finish();
  });
  child.stdin.write('add table inet sync\n');
}
function finish() {
  const result = { lines: interactive.output, stderr: interactive.stderr };
  interactive.output = [];
  interactive.stderr = '';
  const job = interactive.job;
  interactive.job = null;
  job.resolve(result);
  next();
}
function next() {
  if (interactive.job || interactive.queue.length === 0) return;
  const job = (interactive.job = interactive.queue.shift());
  interactive.child.stdin.write(job.kind === 'list' ? `${job.line}\n` : `${job.line}\nlist table inet sync\n`);
}
function nfti(line, kind = 'sync') {
  if (!interactive) startInteractive();
  return new Promise((resolve) => {
    interactive.queue.push({ line, kind, resolve, synced: false });
    next();
  });
}

const lines = createInterface({ input: process.stdin });
lines.on('line', async (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  const { id, cmd } = message;
  try {
    let result;
    if (cmd === 'send') result = await send(message.probes);
    else if (cmd === 'trigger') result = await trigger(message.triggers);
    else if (cmd === 'nft') result = await nft(message.args, message.stdin);
    else if (cmd === 'nfti') result = await nfti(message.line);
    else if (cmd === 'nftlist') result = await nfti(`list table ${message.table}`, 'list');
    else if (cmd === 'reset') result = (reset(), {});
    else throw new Error(`unknown command ${cmd}`);
    process.stdout.write(`${JSON.stringify({ id, ok: true, result })}\n`);
  } catch (error) {
    process.stdout.write(`${JSON.stringify({ id, ok: false, error: String(error?.stack ?? error) })}\n`);
  }
});
lines.on('close', async () => {
  reset();
  // Its own children gone before it: none outlives the lab.
  const children = [interactive?.child, rawSender?.child].filter(Boolean);
  await Promise.all(
    children.map(
      (child) =>
        new Promise((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('close', resolve);
          child.stdin.end();
        }),
    ),
  );
  process.exit(0);
});
process.stdout.write(`${JSON.stringify({ ready: true, netns: own })}\n`);
