// Command zksim is the first thing to run on a fresh clone: it shows what
// the project does, on the embedded in-memory ZooKeeper (zkmem), in under a
// minute, with nothing but Go installed.
//
//	go run ./cmd/zksim
//
// It runs two jobs and prints their progress, then a summary:
//
//  1. the herd comparison: leader election and the lock, with predecessor
//     watches and without (every waiter watching every candidate, or one
//     leader node), with N candidates in the deterministic simulator; per
//     leader change it counts the watch notifications, reads and bytes, and
//     the failover time in virtual time under a cost model;
//  2. a fault exploration of the built-in recipes (locks, election, queues,
//     barriers): rapid state machines that drive clients, lost replies,
//     dropped requests, disconnects, session expiry and process pauses
//     from a seed, checking the recipes' invariants after every step.
//
// Flags:
//
//	-n 10,100,1000    numbers of candidates of the herd comparison
//	                  (-n 10,100,1000,10000 is the full report: 2 to 3
//	                  minutes on 2 cores)
//	-checks 100       random runs per recipe in the exploration
//	-seed S           replay the exploration of an earlier run (it prints
//	                  its seed); 0 draws a new one
//	-flawed           also run the deliberately broken recipes kept in
//	                  property_test, to watch the exploration catch and
//	                  shrink each flaw (half a minute more)
//	-write            replace the committed herd report in benchmarks/
//	                  (herd.md, herd.svg, herd.json) instead of writing to
//	                  a temporary directory; it runs the full sizes, and
//	                  refuses an -n that would make a partial report
//	-herd=false       skip the herd comparison
//	-explore=false    skip the fault exploration (not both: that is an
//	                  error)
//	-v                print the test output as it comes
//
// An argument that is not a flag, or a combination of flags that makes no
// sense, is reported with the usage, and zksim exits with status 2.
//
// The exploration draws a new seed on every run (and prints it); the
// property suite under `go test` runs committed seeds instead (see
// property_test).
//
// Both jobs need the Go test runner (they run inside testing/synctest
// bubbles, where time is virtual), so zksim runs `go test` on the packages
// benchmarks and property_test from the module root, reads its -json
// stream, and condenses it. It must be run from inside the zksim module.
//
// # zksim serve
//
//	zksim serve -addr 127.0.0.1:2181
//
// serves an in-memory ZooKeeper over ZooKeeper's client protocol (package
// zkwire), so that any client in any language (go-zookeeper, Curator,
// kazoo, zkCli.sh) connects unchanged. Its first line of output is the
// address it listens on ("listening on 127.0.0.1:2181"), its second the URL
// of the HTTP fault control endpoint ("control on http://127.0.0.1:PORT";
// see package zkwire); it serves until interrupted, anywhere, not only in
// the module. Its flags have the real server's defaults: -tickTime 2s,
// -minSessionTimeout and -maxSessionTimeout (2 and 20 ticks),
// -extendedTypes=false (TTL nodes off), -jute.maxbuffer 1048575,
// -containerCheckInterval 60s; -control "" turns the endpoint off, and
// -4lw.commands.whitelist lists the four-letter words answered.
package main
