// Package conformance is the behaviour suite every zksim backend must pass:
// the same named cases run against zkmem and, through the adapter, against a
// real ZooKeeper, so that what zkmem does is what a real server does.
//
// It follows the pattern of testing/fstest.TestFS and
// golang.org/x/net/nettest.TestConn: a backend describes itself in a
// [Backend] and calls [Run] from its own test. The suite's own test runs it
// on zkmem and, through gozk, on a real ZooKeeper, both opened by the
// zktest harness from one zkmem.Options value:
//
//	func TestConformance(t *testing.T) {
//		zktest.Run(t, zktest.FastOptions(), func(t *testing.T, b *zktest.Backend) {
//			conformance.Run(t, conformance.Backend{Backend: *b})
//		})
//	}
//
// Another implementation fills in a zktest.Backend itself: a Name, a
// Connect func, the controls it has, and Facts, its server's settings as
// zkmem.Options (zero fields mean ZooKeeper's defaults):
//
//	conformance.Run(t, conformance.Backend{Backend: zktest.Backend{
//		Name: "mine",
//		Connect: func(ctx context.Context, timeout time.Duration) (zksim.Conn, error) {
//			return mine.Connect(ctx, addr, timeout)
//		},
//		Facts: zkmem.Options{TickTime: 100 * time.Millisecond},
//	}})
//
// Every case is a subtest named group/case (for example
// "sequence/deletes-do-not-bump"), so one case runs on zkmem with
// go test -run 'TestConformance/zkmem/sequence/deletes-do-not-bump'
// ./conformance. Each case works
// under its own fresh root, /conformance-<run id>/<group>.<case>, so the
// suite can share one real server with other tests; it never deletes what it
// created. Cases run one after another, never in parallel: several of them
// reason about consecutive zxids.
//
// A case that needs something the backend cannot do (expire a session, cut
// a connection, TTL nodes, an optional capability such as
// [zksim.PersistentWatcher]) skips with a message that names what is missing.
// The ephemeralorder cases watch over the wire with go-zookeeper, to see
// the order of events across watches, which a zksim.Conn's per-watch
// channels do not keep: they need a wire address (Backend.WireAddr), a
// real server (Backend.Real) or a zkmem server to serve over zkwire
// (Backend.Mem), and skip otherwise.
// A backend lists the cases its client library cannot run in [Backend.Skip],
// each with the exact reason, which the skip repeats. No case skips silently.
//
// [CaseNames] lists the cases; go test -run TestCaseNames -v ./conformance
// prints how many there are.
//
// The ensemble cases ([RunEnsemble], [EnsembleCaseNames]) are a group of
// their own, run on a zktest.Ensemble: a 3-member ensemble with controls
// to lag, crash, restart and isolate members and to move a client to the
// next member of its list. They check what a client sees of an ensemble:
// its own writes on a follower, never an older state after a move, sync
// then read, a new session that reads every write that returned before it
// connected, a watch event before the data it announces, ephemerals and
// sessions through a member crash and a leader change, and read-only mode.
// The project's test runs them on a real ensemble (zktest.OpenRealEnsemble).
//
// The cases encode what a real ZooKeeper 3.8 does, as a Java or Go client
// sees it; the facts are those of the project's zk-semantics.md, corrected
// where the real server disagrees (each such case says so in its comment).
package conformance
