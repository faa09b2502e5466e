// Command zksim shows what the project does, on the embedded in-memory
// ZooKeeper (zkmem), in under a minute, with nothing but Go installed; and
// it serves that ZooKeeper to clients in any language. Install it, or run
// it from a checkout:
//
//	go install github.com/zksim/zksim/cmd/zksim@latest
//	go run ./cmd/zksim
//
// It needs no source tree: the simulator, the recipes' state machines
// (package explore) and the herd benchmark (package benchmarks) are
// compiled into it.
//
// # Commands
//
//	zksim [flags]            the herd comparison, then the fault exploration
//	zksim herd [flags]       the herd comparison
//	zksim explore [flags]    the fault exploration
//	zksim serve [flags]      an in-memory ZooKeeper on ZooKeeper's wire protocol
//	zksim help [command]     the commands, or a command's flags
//
// Every command takes -h, which prints its usage to stdout. An argument
// that is not a flag, or a combination of flags that makes no sense, is
// reported with the usage on stderr.
//
// # Exit status
//
//	0  no violation found (zksim serve: stopped by SIGINT or SIGTERM)
//	1  a violation found, a broken recipe of -flawed not caught, or a job
//	   that could not run (zksim serve: the server failed)
//	2  usage: an unknown command or flag, a stray argument, contradictory
//	   flags, a value a server cannot run with
//
// zksim help says the same.
//
// With no command zksim runs two jobs and prints their progress, then a
// summary:
//
//  1. the herd comparison (zksim herd): leader election and the lock, with
//     predecessor watches and without (every waiter watching every
//     candidate, or one leader node), with N candidates in the
//     deterministic simulator; per leader change it counts the watch
//     notifications, reads and bytes, and the failover time in virtual
//     time under a cost model;
//  2. a fault exploration of the built-in recipes (zksim explore): locks,
//     election, queues, barriers: rapid state machines that drive clients,
//     lost replies, dropped requests, disconnects, session expiry and
//     process pauses from a seed, checking the recipes' invariants after
//     every step.
//
// Flags of zksim herd (and of zksim):
//
//	-n 10,100,1000    numbers of candidates of the herd comparison
//	                  (-n 10,100,1000,10000 is the full report: 2 to 3
//	                  minutes on 2 cores)
//	-out DIR          write the herd report (herd.md, herd.svg, herd.json)
//	                  into DIR (none is written without -out or -write)
//	-write            replace the committed herd report in benchmarks/
//	                  (herd.md, herd.svg, herd.json); only inside a checkout of the
//	                  repository (zksim says so elsewhere); it runs the full
//	                  sizes, and refuses an -n that would make a partial
//	                  report
//
// Flags of zksim explore (and of zksim):
//
//	-checks 100       random runs per recipe
//	-seed S           replay the exploration of an earlier run (it prints
//	                  its seed); 0 draws a new one
//	-flawed           also run the deliberately broken recipes
//	                  (explore.Flaws), to watch the exploration catch and
//	                  shrink each flaw
//	-coverage         print under each recipe its coverage table: which
//	                  requests met which faults (a zero is a blind spot)
//	-v                print what rapid logs as it comes
//
// and of zksim alone: -herd=false skips the herd comparison,
// -explore=false the fault exploration (not both: that is an error).
//
// The exploration draws a new seed on every run (and prints it); the
// property suite under `go test` runs committed seeds instead (see
// property_test). Both jobs run inside testing/synctest bubbles, where time
// is virtual, and a bubble needs a *testing.T: zksim runs its job as the
// one test of the testing package's runner (testing.Main), in its own
// process, and prints only what the job prints, unless a test failed
// through the runner.
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
// see package zkwire); it serves until interrupted. -addr 127.0.0.1:0
// picks a free port; -v logs connections, sessions and faults to stderr.
// The control endpoint reports every session (GET /sessions) and what
// happened (GET /events, which waits for the next event), injects faults into one (expire, disconnect, lose the next
// reply, drop the next request, pause, delay), resets the server between
// tests (POST /reset) and restarts it under its clients (POST
// /restart?down=2s); zksim serve -h prints its flags and these routes, to
// stdout. Its flags have the real
// server's defaults: -tickTime 2s, -minSessionTimeout and
// -maxSessionTimeout (2 and 20 ticks), -extendedTypes=false (TTL nodes
// off), -jute.maxbuffer 1048575, -containerCheckInterval 60s,
// -reconfigEnabled=false (reconfig answers ReconfigDisabled; with it on,
// Unimplemented, as a standalone server, and with -servers the checks of
// an ensemble's leader, NoAuth without WRITE on /zookeeper/config among
// them, a change itself Unimplemented); -control ""
// turns the endpoint off, -controlAllowRemote lets -control name an
// address that is not loopback, and -4lw.commands.whitelist lists the
// four-letter words answered. A value a server cannot run with (a
// minSessionTimeout above the maxSessionTimeout, a tickTime that is not a
// positive whole number of milliseconds, an address in use) is reported
// naming the flag, before anything is printed, with exit status 2.
// SIGINT and SIGTERM end it promptly, whatever faults are armed.
//
// zksim serve -servers 3 serves an ensemble instead: three members on
// -addr's port and the two after it (free ports with port 0), printed
// first as "server 1 listening on ADDR" to "server 3 ...", then the control
// URL. A session belongs to the member its connection reached and reads
// its applied state; GET /servers reports the members (by myid, 1 to 3)
// and POST /servers/{n}/lag, catch-up, crash, restart, isolate and heal
// control member n; -readonlymode.enabled lets an isolated member serve
// read-only clients, and -observers K makes the last K members observers.
package main
