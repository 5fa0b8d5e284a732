import type { Pool } from '../../db/pool.ts';
import { createApiKeyRepository, type SecretLookup } from '../../db/api-keys.ts';
import type { Clock } from '../../runtime/clock.ts';
import { hashToken, isWellFormed } from '../../runtime/tokens.ts';
import type { Mode } from '../../runtime/types.ts';
import { checkKey, KEY_PREFIX, type Scope } from '../../actors/account/api-key-rules.ts';
import { ApiError } from '../errors.ts';

/** Who is asking: the account and mode a key acts for. */
export interface AuthContext {
  accountId: string;
  mode: Mode;
  keyId: string;
  requestsPerMinute: number;
  burst: number;
}

const CACHE_TTL_MS = 30_000;
const CACHE_MAX = 10_000;

/**
 * Turns an `Authorization: Bearer <key>` into an AuthContext or a catalogue rejection. A secret
 * that is not well formed (wrong prefix, length or checksum) is refused without a lookup. Known
 * secrets are cached by their hash for a short time and dropped at once when their account changes.
 */
export class KeyAuthenticator {
  private readonly cache = new Map<string, { lookup: SecretLookup; fetchedAtMs: number }>();

  constructor(
    private readonly pool: Pool,
    private readonly clock: Clock,
  ) {}

  async authenticate(header: string | undefined, ip: string, scope: Scope | null): Promise<AuthContext> {
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
      { now: this.clock.now(), ip, scope },
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

  /** Forget every cached secret of an account (its keys, status or limits changed). */
  forgetAccount(accountId: string): void {
    for (const [hash, entry] of this.cache) if (entry.lookup.account.id === accountId) this.cache.delete(hash);
  }

  /** Forget every cached secret (changes may have been missed while the change feed was away). */
  forgetAll(): void {
    this.cache.clear();
  }

  private async lookup(hash: Buffer): Promise<SecretLookup | null> {
    const cacheKey = hash.toString('base64');
    const cached = this.cache.get(cacheKey);
    if (cached && Date.now() - cached.fetchedAtMs < CACHE_TTL_MS) return cached.lookup;
    const lookup = await createApiKeyRepository(this.pool).findBySecretHash(hash);
    if (lookup) {
      if (this.cache.size >= CACHE_MAX) this.cache.clear();
      this.cache.set(cacheKey, { lookup, fetchedAtMs: Date.now() });
    } else {
      this.cache.delete(cacheKey);
    }
    return lookup;
  }
}
