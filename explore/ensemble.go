package explore

import (
	"errors"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/sim"
)

// The recipe machines on a 3-member ensemble (harness.Machine.Members): the
// clients' sessions are served by members that lag, crash, are cut off
// from the quorum, and lose the leader, the ensemble's faults drawn with
// the others. The recipes must stay correct: a read served by a lagging
// member is stale, but the recipes decide from what their own writes and
// watches tell them (a create's name, a delete's outcome, a watch's event,
// which the member delivers before the data it announces), and a member
// never takes a session back to an older state than it saw.
//
// Read-only mode: the recipes take zksim.StateConnectedReadOnly for
// disconnected (recipes/internal/retry waits for StateConnected), which is
// right for every one of them: each step of a lock, an election, a queue
// or a barrier writes (a create, a delete, a multi), and a read-only member
// refuses writes with ErrNotReadOnly, so a recipe could do nothing useful
// on it but read a state the quorum may have moved past. The simulator's
// clients do not ask for read-only mode (zkmem.WithCanBeReadOnly), so
// these machines never meet it.

// A reader on a lagging member may read a state older than a write that
// returned to another client: the recipes whose promise spans clients sync
// first (Barrier.Wait, the queues' TryTake, Peek and Len), and the
// checkers hold them to it (property_test's testdata/findings25/README.md).

// ensembleMembers is the ensemble machines' size.
const ensembleMembers = 3

// ensembleChecks is their CI budget of checks (Machine.ciChecks): a tenth
// of the standalone machines', so that the property suite's time grows by
// under a minute.
const ensembleChecks = 100

func init() {
	// Every recipe machine. On an ensemble a session outlives an outage
	// with no leader (no member expires it, and the next leader gives it
	// a fresh timeout), so the recipes' cleanups never presume a session
	// expired from the time their connection has been down
	// (recipes/internal/retry.CleanupContext; property_test's
	// testdata/findings25/README.md, "orphan").
	for _, name := range []string{"QueueFIFO", "QueueLocking", "Barrier",
		"Election", "LockMutex", "BarrierDouble", "LockRWMutex", "LockSemaphore",
		"ElectionSingleNode", "QueuePriority", "BarrierStart"} {
		m, ok := Recipe(name)
		if !ok {
			panic("explore: no recipe machine " + name)
		}
		m.Name += "Ensemble"
		m.What += ", on an ensemble" // (at most 46 characters: zksim explore's column)
		m.cfg.members = ensembleMembers
		m.ciChecks = ensembleChecks
		Recipes = append(Recipes, m)
	}
}

// memberBehind reports whether session i is served by a member that has
// not applied every commit yet: what the client will hear of them (the
// watch events, the new data) is still on its way, as a reply in flight
// is. Always false on a standalone server.
func (w *world) memberBehind(i int) bool {
	e := w.sw.Ensemble()
	if e == nil {
		return false
	}
	m := w.sw.Member(i)
	return m >= 0 && e.Pending(m) > 0
}

// connect opens a new session for a machine's own use. On an ensemble no
// member takes one during an election (or without a quorum): the action
// is skipped then, as one that cannot run now.
func (w *world) connect(t *rapid.T) (*sim.Conn, error) {
	conn, err := w.sw.Connect()
	if err != nil && w.sw.Members() > 1 && errors.Is(err, zksim.ErrConnectionLoss) {
		t.SkipNow()
	}
	return conn, err
}
