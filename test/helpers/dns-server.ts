import dgram from 'node:dgram';
import type { AddressInfo } from 'node:net';
import dnsPacket from 'dns-packet';

/** What a name answers besides its records: NXDOMAIN, SERVFAIL, or nothing at all (the asker times out). */
export type DnsFailure = 'nxdomain' | 'servfail' | 'timeout';

/** One question the server was asked, as it arrived. */
export interface DnsQuery {
  name: string;
  type: string;
}

export interface TestDns {
  /** `127.0.0.1:<port>`, as SWITCHBOARD_DNS_SERVERS takes it. */
  server: string;
  port: number;
  /** Every question asked, in order. */
  queries: DnsQuery[];
  /** Points `name` at `target` (replacing what `name` had). */
  cname(name: string, target: string): void;
  /** Gives `name` an address (replacing what `name` had). */
  a(name: string, address: string): void;
  /** Makes `name` fail this way until `clear` (a failure wins over records). */
  fail(name: string, failure: DnsFailure): void;
  /** Forgets `name`'s records and failure: it answers NXDOMAIN again. */
  clear(name: string): void;
  close(): Promise<void>;
}

type Record = { type: 'CNAME' | 'A'; data: string };

const key = (name: string) => name.toLowerCase().replace(/\.$/, '');
const NXDOMAIN = 3;
const SERVFAIL = 2;
const SOA = { name: 'example', type: 'SOA' as const, ttl: 60, data: { mname: 'ns.example', rname: 'admin.example', serial: 1, refresh: 60, retry: 60, expire: 60, minimum: 60 } };

/**
 * A small authoritative DNS server on 127.0.0.1 (UDP, a random port) that a test fills with
 * CNAME and A records, for the service's DNS checks to ask instead of the internet. A name with
 * no records is NXDOMAIN; a name with records but none of the type asked is an empty answer
 * (NODATA); a CNAME answers every type, followed by its target's records when known (as a real
 * server answers a chain it holds). Names compare without case or a trailing dot.
 */
export async function startTestDns(): Promise<TestDns> {
  const records = new Map<string, Record[]>();
  const failures = new Map<string, DnsFailure>();
  const queries: DnsQuery[] = [];
  const socket = dgram.createSocket('udp4');

  const answersFor = (name: string, type: string) => {
    const answers: dnsPacket.Answer[] = [];
    let at = name;
    // Follows a chain the server holds (bounded, so a loop the test makes cannot hang it).
    for (let hop = 0; hop < 8; hop++) {
      const held = records.get(key(at)) ?? [];
      const cname = held.find((r) => r.type === 'CNAME');
      if (cname) {
        answers.push({ name: at, type: 'CNAME', ttl: 60, data: cname.data });
        if (type === 'CNAME') break;
        at = cname.data;
        continue;
      }
      for (const r of held) if (r.type === type) answers.push({ name: at, type: r.type, ttl: 60, data: r.data });
      break;
    }
    return answers;
  };

  socket.on('message', (message, from) => {
    let query: dnsPacket.DecodedPacket;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return; // not DNS: dropped, as a real server would
    }
    const question = query.questions?.[0];
    if (!question) return;
    queries.push({ name: question.name, type: question.type });
    const failure = failures.get(key(question.name));
    if (failure === 'timeout') return;
    const known = records.has(key(question.name));
    const rcode = failure === 'servfail' ? SERVFAIL : failure === 'nxdomain' || !known ? NXDOMAIN : 0;
    const answers = rcode === 0 ? answersFor(question.name, question.type) : [];
    const reply = dnsPacket.encode({
      type: 'response',
      id: query.id,
      flags: dnsPacket.AUTHORITATIVE_ANSWER | ((query.flags ?? 0) & dnsPacket.RECURSION_DESIRED) | rcode,
      questions: [question],
      answers,
      // NXDOMAIN and NODATA carry the zone's SOA, as RFC 2308 asks.
      authorities: answers.length === 0 && rcode !== SERVFAIL ? [SOA] : [],
    });
    socket.send(reply, from.port, from.address);
  });

  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => resolve());
  });
  const { port } = socket.address() as AddressInfo;

  return {
    server: `127.0.0.1:${port}`,
    port,
    queries,
    cname(name, target) {
      records.set(key(name), [{ type: 'CNAME', data: target }]);
    },
    a(name, address) {
      records.set(key(name), [{ type: 'A', data: address }]);
    },
    fail(name, failure) {
      failures.set(key(name), failure);
    },
    clear(name) {
      records.delete(key(name));
      failures.delete(key(name));
    },
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
