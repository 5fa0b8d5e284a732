import { Writable } from 'node:stream';
import { runAdmin } from '../../app/admin-cli.ts';
import { ADMIN_TOKEN } from './service.ts';

/** A writable that keeps what was written. */
class Sink extends Writable {
  text = '';
  override _write(chunk: Buffer, _e: string, done: () => void) {
    this.text += chunk.toString();
    done();
  }
}

const parse = (s: string) => {
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
};

/**
 * `switchboard admin <args>` against the service at `baseUrl`, in this process: its exit code
 * and what it printed on stdout and stderr (parsed when JSON).
 */
export async function adminCli(baseUrl: string, args: string[], token = ADMIN_TOKEN): Promise<{ code: number; out: any; err: any }> {
  const out = new Sink();
  const err = new Sink();
  const code = await runAdmin(args, { SWITCHBOARD_ADMIN_TOKEN: token, SWITCHBOARD_URL: baseUrl }, out as any, err as any);
  return { code, out: parse(out.text), err: parse(err.text) };
}
