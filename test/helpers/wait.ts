/** Resolves once `probe` answers truthy (checked every `everyMs`); rejects naming `what` after `timeoutMs`. */
export async function until(what: string, probe: () => Promise<unknown> | unknown, timeoutMs = 15_000, everyMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
