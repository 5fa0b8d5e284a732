/** A response as tests look at it. */
export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  key?: string;
  body?: unknown;
  /** Sent as is (for malformed-JSON tests). */
  rawBody?: string;
  headers?: Record<string, string>;
}

/** One HTTP request to the service under test over a real socket. */
export async function call<T = any>(baseUrl: string, method: string, path: string, opts: RequestOptions = {}): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  let body: string | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
  const res = await fetch(baseUrl + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* HTML or empty */
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

/** A client bound to one base URL and (optionally) one key. */
export function client(baseUrl: string, key?: string) {
  const go = <T = any>(method: string, path: string, opts: RequestOptions = {}) => call<T>(baseUrl, method, path, { key, ...opts });
  return {
    get: <T = any>(path: string, opts?: RequestOptions) => go<T>('GET', path, opts),
    post: <T = any>(path: string, body?: unknown, opts?: RequestOptions) => go<T>('POST', path, { body, ...opts }),
    patch: <T = any>(path: string, body?: unknown, opts?: RequestOptions) => go<T>('PATCH', path, { body, ...opts }),
    put: <T = any>(path: string, body?: unknown, opts?: RequestOptions) => go<T>('PUT', path, { body, ...opts }),
    delete: <T = any>(path: string, opts?: RequestOptions) => go<T>('DELETE', path, opts),
  };
}
export type Client = ReturnType<typeof client>;

/**
 * Percent-encodes text for a path or query string as a client that does not check it would:
 * like encodeURIComponent, except that a lone UTF-16 surrogate (which encodeURIComponent
 * refuses) goes out as the three bytes a careless UTF-8 encoder writes for it (not valid UTF-8).
 */
export function encodeAnyText(text: string): string {
  let out = '';
  for (const ch of text) {
    const unit = ch.charCodeAt(0);
    if (ch.length === 1 && unit >= 0xd800 && unit <= 0xdfff) {
      out += [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else {
      out += encodeURIComponent(ch);
    }
  }
  return out;
}
