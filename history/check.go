package history

import (
	"fmt"
	"strings"
)

// Rule names the guarantee a Violation breaks.
type Rule string

// The rules Check enforces.
const (
	// Linearizable: the writes have no order, consistent with real time,
	// that explains their results; or their zxids contradict real time.
	Linearizable Rule = "linearizable writes"
	// ValueWritten: a read returned a state no write produced, or two
	// reports of one state disagree.
	ValueWritten Rule = "reads return written states"
	// Monotonic: a client read a state older than one it had already seen.
	Monotonic Rule = "monotonic reads"
	// ReadYourWrites: a client read a state older than its own
	// acknowledged write.
	ReadYourWrites Rule = "read your writes"
	// SyncRead: after an acknowledged sync, a client read a state older
	// than a write acknowledged before the sync was invoked.
	SyncRead Rule = "sync then read"
)

// Violation is one broken rule: the client it concerns (-1 when it is not
// one client's), the operations involved (the offending one first) and why.
type Violation struct {
	Rule   Rule
	Client int
	Ops    []Op
	Why    string
}

func (v Violation) String() string {
	var b strings.Builder
	if v.Client >= 0 {
		fmt.Fprintf(&b, "%s, client %d: %s", v.Rule, v.Client, v.Why)
	} else {
		fmt.Fprintf(&b, "%s: %s", v.Rule, v.Why)
	}
	for i, op := range v.Ops {
		if i == maxOpsShown {
			fmt.Fprintf(&b, "\n\t... and %d more", len(v.Ops)-maxOpsShown)
			break
		}
		fmt.Fprintf(&b, "\n\t%s", op.String())
	}
	return b.String()
}

// Error is what Check returns for a history that breaks a rule.
type Error struct {
	// Ops is the number of operations in the history.
	Ops int
	// Violations lists every violation found, in the order found (writes
	// first, then each client's reads).
	Violations []Violation
}

// maxShown bounds the violations Error prints, maxOpsShown the operations
// a Violation prints (Ops holds them all).
const (
	maxShown    = 10
	maxOpsShown = 30
)

func (e *Error) Error() string {
	var b strings.Builder
	plural := "s"
	if len(e.Violations) == 1 {
		plural = ""
	}
	fmt.Fprintf(&b, "history of %d operations breaks ZooKeeper's guarantees (%d violation%s)", e.Ops, len(e.Violations), plural)
	for i, v := range e.Violations {
		if i == maxShown {
			fmt.Fprintf(&b, "\n... and %d more", len(e.Violations)-maxShown)
			break
		}
		fmt.Fprintf(&b, "\n%d. %s", i+1, v.String())
	}
	return b.String()
}

// Has reports whether e holds a violation of rule.
func (e *Error) Has(rule Rule) bool {
	for _, v := range e.Violations {
		if v.Rule == rule {
			return true
		}
	}
	return false
}

// Check checks a history of operations on one ZooKeeper service (in any
// order; as Recorder.History returns it) and returns nil if it is
// consistent with ZooKeeper's guarantees, an *Error listing what is not,
// or another error if the history cannot be judged (an Unsupported
// operation, a malformed one).
//
// Every path the history touches is taken to be absent when the history
// starts (create the directory the workload works in before recording).
// The checks:
//
//   - The writes (create, set, delete) are linearizable: one order of them,
//     consistent with real time, explains every result (porcupine, one
//     partition per path; a write of Unknown outcome may have taken effect
//     or not, before its session's next write returned). Known zxids (from a Set's Stat, and from reads that return
//     a write's unique data) must follow that order and real time.
//   - Every read returns a state some write produced: its data was written
//     by a write that did not fail, and every report of one state
//     (path, czxid, version) agrees on mzxid and data.
//   - Each client's reads are sequentially consistent: a read reflects a
//     prefix of the write order no shorter than any the client saw
//     before (by its reads, its acknowledged writes, and, after a sync,
//     every write acknowledged before the sync was invoked). The zxids of
//     each Stat place the read: a read of version v of a node is too old
//     once the client has seen a zxid at or past the one that replaced v.
//
// Give each write unique data for the sharpest check: that is how a read
// is tied to the write it shows (and an unknown write to having happened).
// Check does not block; its time grows with the history's length and with
// the number of concurrent writes on one path.
func Check(ops []Op) error {
	c, err := newChecker(ops)
	if err != nil {
		return err
	}
	c.learn()
	c.effectTimes()
	c.checkWrites()
	c.bound()
	c.checkStates()
	c.checkClients()
	if len(c.vio) == 0 {
		return nil
	}
	return &Error{Ops: len(ops), Violations: c.vio}
}
