/**
 * Small loopback servers for network-failure tests: one that accepts connections and never
 * answers, one that answers every request with a fixed HTTP reply (an HTML page), and a port
 * nothing listens on.
 */
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo, type Socket } from 'node:net';

export interface LoopbackServer {
  url: string;
  close(): Promise<void>;
}

/** Accepts TCP connections and never sends a byte. */
export async function startSilentServer(): Promise<LoopbackServer> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Answers every request with `status`, `contentType` and `body` (a web server's page, say). */
export async function startFixedAnswerServer(
  status: number,
  contentType: string,
  body: string,
): Promise<LoopbackServer & { requests: number }> {
  const state = { requests: 0 };
  const server = createHttpServer((_req, res) => {
    state.requests++;
    res.writeHead(status, { 'content-type': contentType }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return state.requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A loopback URL whose port nothing listens on (taken from the OS, then released). */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
