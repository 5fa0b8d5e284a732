/**
 * PostgreSQL's wire protocol, as much of it as a test's fake server needs to answer a client's
 * start-up and simple queries (PostgreSQL docs, "Message Flow", "Message Formats"): the tests of
 * what the service's pg client does with answers a real server gives only in rare moments (a
 * shutdown's FATAL in the start-up's packet, a server older than PostgreSQL 14).
 */

/** A backend message: its type byte, its length (Int32, counting itself) and its body. */
export function message(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

/** A String field: UTF-8, NUL-terminated. */
export const cstring = (s: string) => Buffer.from(`${s}\0`, 'utf8');

export const int16 = (n: number) => Buffer.from([(n >> 8) & 0xff, n & 0xff]);

export function int32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
}

/** ReadyForQuery, idle. */
export const readyForQuery = () => message('Z', Buffer.from('I', 'latin1'));
