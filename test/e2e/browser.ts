import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's chromium (playwright cannot download its own here; .ci/run installs this one). */
export const CHROMIUM = '/usr/bin/chromium';

/** Headless chromium, without the background networking this closed network refuses. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is not installed at ${CHROMIUM}; install it with \`apt-get update && apt-get install -y chromium\` (.ci/run does this in CI).`);
  }
  try {
    return await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
  } catch (err) {
    throw new Error(`chromium did not launch from ${CHROMIUM}: ${err}`);
  }
}
