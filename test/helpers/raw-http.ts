import net from 'node:net';

/** What came back on a raw socket: the status line's code, headers (lower-case names) and body. */
export interface RawReply {
  /** 0 when the server closed the connection without answering. */
  status: number;
  headers: Record<string, string>;
  body: string;
  /** How long until the server closed the connection, ms. */
  closedAfterMs: number;
}

export interface RawRequest {
  method: string;
  /** Sent exactly as given: origin-form, absolute-form, dot-segments and all (fetch would normalise them). */
  target: string;
  headers?: Record<string, string>;
  body?: string;
}

function parse(text: string, closedAfterMs: number): RawReply {
  const split = text.indexOf('\r\n\r\n');
  const head = split < 0 ? text : text.slice(0, split);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0), headers, body: split < 0 ? '' : text.slice(split + 4), closedAfterMs };
}

/**
 * Writes `head` (and then each of `chunks`, `gapMs` apart) on a new connection and reads until the
 * server closes it or `timeoutMs` passes.
 */
export function rawExchange(port: number, head: string, opts: { chunks?: string[]; gapMs?: number; timeoutMs?: number } = {}): Promise<RawReply> {
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    let done = false;
    const timers: NodeJS.Timeout[] = [];
    const finish = () => {
      if (done) return;
      done = true;
      for (const timer of timers) clearTimeout(timer);
      socket.destroy();
      resolve(parse(received, Date.now() - started));
    };
    socket.on('connect', () => {
      socket.write(head);
      (opts.chunks ?? []).forEach((chunk, i) => timers.push(setTimeout(() => socket.writable && socket.write(chunk), (i + 1) * (opts.gapMs ?? 0))));
    });
    socket.on('data', (d) => (received += d.toString('latin1')));
    socket.on('close', finish);
    socket.on('error', finish);
    timers.push(setTimeout(finish, opts.timeoutMs ?? 5_000));
  });
}

/** One HTTP/1.1 request on its own connection (`Connection: close`), sent byte for byte as given. */
export function rawRequest(port: number, r: RawRequest): Promise<RawReply> {
  const headers: Record<string, string> = { host: `127.0.0.1:${port}`, connection: 'close', ...r.headers };
  if (r.body !== undefined) headers['content-length'] = String(Buffer.byteLength(r.body));
  const head = `${r.method} ${r.target} HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n${r.body ?? ''}`;
  return rawExchange(port, head);
}
