#!/usr/bin/env node
// The switchboard command. The sources are TypeScript run through tsx, so there is no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../app/cli.ts');
main(process.argv.slice(2)).catch((err) => {
  // A bad setting is the operator's to fix: one line and exit 2; so is a machine on which the
  // embedded database cannot run: one line and exit 1; anything else is a fault: its stack.
  if (err?.name === 'SettingError' || err?.name === 'EmbeddedDatabaseError') {
    process.stderr.write(`switchboard: ${err.message}\n`);
    process.exit(err.name === 'SettingError' ? 2 : 1);
  }
  process.stderr.write(`${err?.stack ?? err}\n`);
  process.exit(1);
});
