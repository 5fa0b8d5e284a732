import type { Pool } from '../../db/pool.ts';
import { createApiKeyRepository, type SecretLookup } from '../../db/api-keys.ts';
import { realClock, type Clock } from '../../runtime/clock.ts';
import { hashToken, isWellFormed } from '../../runtime/tokens.ts';
import type { Mode } from '../../runtime/types.ts';
import { checkKey, KEY_PREFIX, keyClock, type Scope } from '../../actors/account/api-key-rules.ts';
import { ApiError } from '../errors.ts';

/** Who is asking: the account and mode a key acts for. */
export interface AuthContext {
  accountId: string;
  mode: Mode;
  keyId: string;
  requestsPerMinute: number;
  burst: number;
}

/**
 * How long a known secret is trusted without a lookup, ms. It is also the bound on how late another
 * process sees a revocation when its change feed is away (docs/api.md, Authentication).
 */
export const CACHE_TTL_MS = 30_000;
const CACHE_MAX = 10_000;
/**
 * How long a well-formed but unknown secret is answered without a lookup, ms: guessed keys with a
 * valid checksum cost one query per secret and window, not one per request. Short, and harmless to
 * real keys: a secret is random, so none is ever looked up before it is created.
 */
export const NEGATIVE_TTL_MS = 5_000;
const NEGATIVE_MAX = 10_000;

/** What a route asks of a key besides being valid. */
export interface KeyRequirement {
  /** Permission the route needs; null: any valid key. */
  scope: Scope | null;
  /** A live key may use the route before its account has gone live (the route only reads or sets up the account's own data). */
  beforeGoLive: boolean;
}

/**
 * Turns an `Authorization: Bearer <key>` into an AuthContext or a catalogue rejection. A secret
 * that is not well formed (wrong prefix, length or checksum) is refused without a lookup. Known
 * secrets are cached by their hash for a short time and dropped at once when their account changes.
 *
 * A lookup that was under way while its account was forgotten may have read the row from before
 * the change (a revocation committed while the query ran): its result is never cached, and it is
 * read again. Every forget takes the next number of `generation`; a lookup remembers the number it
 * started under and compares it with its account's last forget.
 */
export class KeyAuthenticator {
  private readonly cache = new Map<string, { lookup: SecretLookup; fetchedAtMs: number }>();
  private readonly unknown = new Map<string, number>();
  private generation = 0;
  /** Account id → generation of its last forget. */
  private readonly forgottenAt = new Map<string, number>();
  private allForgottenAt = 0;

  constructor(
    private readonly pool: Pool,
    /** The schedule clock (a test clock moves it): a test key's expiry and rotation grace. */
    private readonly clock: Clock,
    /** Wall time for the cache's lifetimes, ms: never the test clock, which tests move by days. */
    private readonly nowMs: () => number = Date.now,
    /** Real time: a live key's expiry and rotation grace, which no test clock moves. */
    private readonly realTime: Clock = realClock,
  ) {}

  async authenticate(header: string | undefined, ip: string, { scope, beforeGoLive }: KeyRequirement): Promise<AuthContext> {
    const secret = header?.startsWith('Bearer ') ? header.slice(7).trim() : '';
    const mode: Mode | null = secret.startsWith(KEY_PREFIX.live) ? 'live' : secret.startsWith(KEY_PREFIX.test) ? 'test' : null;
    if (!mode || !isWellFormed(secret, KEY_PREFIX[mode])) throw new ApiError('invalid_api_key');

    const lookup = await this.lookup(hashToken(secret));
    if (!lookup) throw new ApiError('invalid_api_key');
    const { key, account } = lookup;
    const rejection = checkKey(
      {
        mode: key.mode,
        scopes: key.scopes,
        ipAllowlist: key.ip_allowlist,
        expiresAt: key.expires_at,
        revokedAt: key.revoked_at,
        secretGraceUntil: lookup.grace_until,
        accountStatus: account.status,
        accountMode: account.mode,
      },
      { now: keyClock(key.mode, this.clock, this.realTime).now(), ip, scope, beforeGoLive },
    );
    if (rejection === 'scope_missing') {
      throw new ApiError('scope_missing', `This API key does not have the ${scope} permission.`);
    }
    if (rejection) throw new ApiError(rejection);
    return {
      accountId: account.id,
      mode: key.mode,
      keyId: key.id,
      requestsPerMinute: account.requests_per_minute,
      burst: account.burst,
    };
  }

  /**
   * Forget every cached secret of an account (its keys, status or limits changed). The account
   * actor calls it after its own change commits, before answering; the change feed, for changes
   * made by other processes.
   */
  forgetAccount(accountId: string): void {
    this.generation++;
    if (this.forgottenAt.size >= CACHE_MAX) this.forgetAll();
    this.forgottenAt.set(accountId, this.generation);
    for (const [hash, entry] of this.cache) if (entry.lookup.account.id === accountId) this.cache.delete(hash);
  }

  /** Forget every cached secret (changes may have been missed while the change feed was away). */
  forgetAll(): void {
    this.generation++;
    this.allForgottenAt = this.generation;
    this.forgottenAt.clear();
    this.cache.clear();
  }

  private async lookup(hash: Buffer): Promise<SecretLookup | null> {
    const cacheKey = hash.toString('base64');
    const nowMs = this.nowMs();
    const cached = this.cache.get(cacheKey);
    if (cached && nowMs - cached.fetchedAtMs < CACHE_TTL_MS) return cached.lookup;
    const unknownSince = this.unknown.get(cacheKey);
    if (unknownSince !== undefined && nowMs - unknownSince < NEGATIVE_TTL_MS) return null;

    // Read again while the account was forgotten during the read (bounded: a forget per read is rare).
    for (let attempt = 1; ; attempt++) {
      const startedAt = this.generation;
      const lookup = await createApiKeyRepository(this.pool).findBySecretHash(hash);
      if (!lookup) {
        this.cache.delete(cacheKey);
        if (this.unknown.size >= NEGATIVE_MAX) this.unknown.clear();
        this.unknown.set(cacheKey, this.nowMs());
        return null;
      }
      this.unknown.delete(cacheKey);
      const raced = Math.max(this.allForgottenAt, this.forgottenAt.get(lookup.account.id) ?? 0) > startedAt;
      if (raced && attempt < 3) continue;
      if (!raced) {
        if (this.cache.size >= CACHE_MAX) this.cache.clear();
        this.cache.set(cacheKey, { lookup, fetchedAtMs: this.nowMs() });
      }
      return lookup;
    }
  }
}
