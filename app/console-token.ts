import type { Config } from '../runtime/config.ts';
import type { Logger } from '../runtime/logger.ts';
import { hashToken, mintToken } from '../runtime/tokens.ts';
import type { Pool } from '../db/pool.ts';
import { createSettingsRepository } from '../db/settings.ts';

const CONSOLE_TOKEN_SETTING = 'console_token_sha256';

/**
 * Resolves the operator token: SWITCHBOARD_CONSOLE_TOKEN when set; otherwise the stored hash of
 * the token printed at the first start; otherwise (or when asked) a new token, printed once.
 */
export async function consoleToken(
  pool: Pool,
  config: Config,
  opts: { newConsoleToken?: boolean; announce?: (line: string) => void },
  log: Logger,
): Promise<Buffer> {
  if (config.consoleToken) return hashToken(config.consoleToken);
  const settings = createSettingsRepository(pool);
  const stored = await settings.get(CONSOLE_TOKEN_SETTING);
  if (stored && !opts.newConsoleToken) {
    log.info('console token: the one printed at first start (set SWITCHBOARD_CONSOLE_TOKEN, or start with --new-console-token)');
    return Buffer.from(stored, 'hex');
  }
  const token = mintToken('sbc_');
  await settings.set(CONSOLE_TOKEN_SETTING, hashToken(token).toString('hex'));
  (opts.announce ?? ((l) => process.stdout.write(`${l}\n`)))(
    `Console token (shown once; export it as SWITCHBOARD_CONSOLE_TOKEN to use the console): ${token}`,
  );
  log.info('a new console token was generated and printed once');
  return hashToken(token);
}
