package api

import "time"

// Epoch is the origin of Sluice's reproducible clocks, 2026-01-01 00:00 UTC: generated clusters
// (engine/synth) and the plugins' tests count their times from it, and so do scenario files
// (clients/go/scenario keeps its own copy of the instant, since clients do not import the
// engine; a test in cmd/sluicectl keeps the two equal).
var Epoch = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)
