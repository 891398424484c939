/**
 * A loopback TCP proxy between a server and PostgreSQL, for tests of what the server does when
 * its database connection fails. It reads the messages a client sends (PostgreSQL's protocol: a
 * startup packet, then a type byte and a length per message), so it can fail a connection at an
 * exact point:
 *
 *   const proxy = await startPgProxy(databaseUrl);
 *   proxy.url                       // the database URL through the proxy
 *   const cut = proxy.cutInNextTransaction();   // the next write transaction loses its connection
 *   ...                             // once the transaction has begun (BEGIN and the write lock
 *   await cut;                      // answered), its next statement is never delivered
 *   proxy.down(); proxy.up();       // the database "stops": every connection dropped, new ones closed at once
 */
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

/** Text of the statement that begins every write transaction of the PostgreSQL store. */
const BEGIN_MARKER = 'pg_advisory_xact_lock';

export interface PgProxy {
  /** `databaseUrl` with its host and port replaced by the proxy's. */
  url: string;
  /**
   * Arms a cut: on the next connection that begins a write transaction, the first message after
   * the BEGIN is dropped and both sides of the connection are destroyed (the database rolls the
   * transaction back). Resolves once it has happened.
   */
  cutInNextTransaction(): Promise<void>;
  /** Drops every open connection and closes each new one at once, until up(). */
  down(): void;
  up(): void;
  /** Connections opened through the proxy so far. */
  readonly connections: number;
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream: Socket;
}

export async function startPgProxy(databaseUrl: string): Promise<PgProxy> {
  const target = new URL(databaseUrl);
  const targetPort = Number(target.port || 5432);
  const targetHost = target.hostname;
  const pairs = new Set<Pair>();
  let isDown = false;
  let opened = 0;
  let armed: (() => void) | null = null;

  const destroy = (pair: Pair) => {
    pair.client.destroy();
    pair.upstream.destroy();
    pairs.delete(pair);
  };

  const server = createServer((client) => {
    client.on('error', () => undefined);
    if (isDown) {
      client.destroy();
      return;
    }
    opened++;
    const upstream = connect(targetPort, targetHost);
    upstream.on('error', () => undefined);
    const pair: Pair = { client, upstream };
    pairs.add(pair);
    client.on('close', () => destroy(pair));
    upstream.on('close', () => destroy(pair));
    upstream.on('data', (chunk: Buffer) => client.write(chunk));

    // Client to server, message by message.
    let buffered = Buffer.alloc(0);
    let started = false;
    let inTransaction = false;
    client.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        // The startup packet (and an SSL or GSS request before it) has no type byte.
        const headerLength = started ? 5 : 4;
        if (buffered.length < headerLength) return;
        const length = started ? buffered.readInt32BE(1) + 1 : buffered.readInt32BE(0);
        if (buffered.length < length) return;
        const message = buffered.subarray(0, length);
        buffered = buffered.subarray(length);
        if (!started) {
          // SSLRequest / GSSENCRequest: the client sends the startup packet after the answer.
          const code = message.readInt32BE(4);
          if (!(length === 8 && (code === 80877103 || code === 80877104))) started = true;
          upstream.write(message);
          continue;
        }
        const type = String.fromCharCode(message[0]!);
        if (inTransaction && armed) {
          const done = armed;
          armed = null;
          destroy(pair);
          done();
          return;
        }
        if (type === 'Q' || type === 'P') {
          if (message.includes(BEGIN_MARKER)) inTransaction = true;
          else if (/^(COMMIT|ROLLBACK)\b/i.test(message.subarray(5).toString('utf8').trim())) inTransaction = false;
        }
        upstream.write(message);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const proxied = new URL(databaseUrl);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(port);

  return {
    url: proxied.toString(),
    cutInNextTransaction() {
      if (armed) throw new Error('a cut is already armed');
      return new Promise<void>((resolve) => {
        armed = resolve;
      });
    },
    down() {
      isDown = true;
      for (const pair of [...pairs]) destroy(pair);
    },
    up() {
      isDown = false;
    },
    get connections() {
      return opened;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const pair of [...pairs]) destroy(pair);
        server.close(() => resolve());
      }),
  };
}
