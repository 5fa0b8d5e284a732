// Node flags for a process that runs the media server (the dialler role in ecosystem.config.cjs;
// bench/media-relay.ts starts its server process with the same ones). At 1,000 calls the server
// allocates ~1 KB a frame (the decoded text, the reply, the match) at 50 frames a call-second
// each way; with V8's default young generation, which starts at a 1 MB semi-space and stays
// there while almost nothing survives, that was 27–65 scavenges a second, each pause landing on
// every frame in flight. A 16 MB semi-space from the start: ~4 a second, each 0.3–0.9 ms instead
// of 0.2–0.3, a third to a quarter of the time in all (docs/decisions.md "Issue 25 §4, round 34:
// the media relay"; not a p99 fix: scavenges were not the tail). Costs up to 32 MB more memory a
// process (the two semi-spaces, touched as they fill).
module.exports = ['--min-semi-space-size=16', '--max-semi-space-size=16'];
