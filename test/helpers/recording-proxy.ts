/** A loopback HTTP proxy that forwards every request to a server and records its method and path. */
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordingProxy {
  url: string;
  /** `PATCH /v0/rules/<id>`, in the order they reached the proxy. */
  requests: string[];
  close(): Promise<void>;
}

export interface RecordingProxyOptions {
  /** Answers a request itself instead of forwarding it (recorded all the same); true when it did. */
  answer?: (req: IncomingMessage, res: ServerResponse) => boolean;
}

export async function startRecordingProxy(
  target: string,
  options: RecordingProxyOptions = {},
): Promise<RecordingProxy> {
  const upstream = new URL(target);
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    if (options.answer?.(req, res)) return;
    const forward = request(
      { host: upstream.hostname, port: Number(upstream.port), method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
