// Package durability holds the tests that prove sluiced's durable and replicated modes
// against real sluiced processes on loopback: crash consistency under kill -9, failover of
// a 3-member cluster, load (50 Sync streams and a scheduling loop), storage faults (a full
// or read-only data directory), and sluicectl applying a file to a durable sluiced started
// a moment before (it waits for the member to elect itself).
//
// They run only when SLUICE_DURABILITY is set: "short" (make durability-short, part of make
// test: a few kill points, one failover, 10 s of load) or "full" (make test-durability: 20
// kill points, three failovers, 60 s of load). SLUICE_DURABILITY_REPORT, if set, names a
// file the tests append their measurements to (recovery times, p99 latencies, RSS).
package durability
