// Node flags for a process that runs the media server (the dialler role in ecosystem.config.cjs;
// bench/media-relay.ts starts its server process with the same ones). At 1,000 calls the server
// allocates ~1 KB a frame (the decoded text, the reply, the match) at 50 frames a call-second
// each way; with V8's default young generation, which starts at a 1 MB semi-space and stays
// there while almost nothing survives, that was a scavenge every ~30 ms, each pause landing on
// every frame in flight. A 16 MB semi-space from the start: ~4 scavenges a second, each no
// longer (docs/decisions.md "Issue 25 §4, round 34: the media relay"). Costs ~32 MB more
// memory a process at most (the two semi-spaces, touched as they fill).
module.exports = ['--min-semi-space-size=16', '--max-semi-space-size=16'];
