import type { Config } from '../runtime/config.ts';
import type { Logger } from '../runtime/logger.ts';
import { hashToken, mintToken } from '../runtime/tokens.ts';
import type { Pool } from '../db/pool.ts';
import { createSettingsRepository } from '../db/settings.ts';

const ADMIN_TOKEN_SETTING = 'admin_token_sha256';

/**
 * Resolves the operator token: SWITCHBOARD_ADMIN_TOKEN when set; otherwise the stored hash of
 * the token printed at the first start; otherwise (or when asked) a new token, printed once.
 */
export async function adminToken(
  pool: Pool,
  config: Config,
  opts: { newAdminToken?: boolean; announce?: (line: string) => void },
  log: Logger,
): Promise<Buffer> {
  if (config.adminToken) return hashToken(config.adminToken);
  const settings = createSettingsRepository(pool);
  const stored = await settings.get(ADMIN_TOKEN_SETTING);
  if (stored && !opts.newAdminToken) {
    log.info('admin token: the one printed at first start (set SWITCHBOARD_ADMIN_TOKEN, or start with --new-admin-token)');
    return Buffer.from(stored, 'hex');
  }
  const token = mintToken('sbc_');
  await settings.set(ADMIN_TOKEN_SETTING, hashToken(token).toString('hex'));
  (opts.announce ?? ((l) => process.stdout.write(`${l}\n`)))(
    `Admin token (shown once; export it as SWITCHBOARD_ADMIN_TOKEN to use the admin commands): ${token}`,
  );
  log.info('a new admin token was generated and printed once');
  return hashToken(token);
}
