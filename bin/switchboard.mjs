#!/usr/bin/env node
// The switchboard command. The sources are TypeScript run through tsx, so there is no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../runtime/cli.ts');
main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`${err?.stack ?? err}\n`);
  process.exit(1);
});
