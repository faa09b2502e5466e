package harness

import (
	"fmt"
	"strings"

	"pgregory.net/rapid"

	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/zkmem"
)

// A machine on an ensemble (Machine.Members > 1): the actions of the
// ensemble's faults strike a member drawn by rapid, and the liveness phase
// brings every member back.

// memberIs reports whether member m is one of who now.
func (w *runWorld) memberIs(who faults.Who, m int) bool {
	r := w.sw.Ensemble().Role(m)
	switch who {
	case faults.Following:
		return (r == zkmem.RoleFollower || r == zkmem.RoleObserver) && !w.sw.Lagging(m)
	case faults.Behind:
		return w.sw.Lagging(m)
	case faults.Serving:
		return r == zkmem.RoleLeader || r == zkmem.RoleFollower || r == zkmem.RoleObserver
	case faults.Down:
		return r == zkmem.RoleDown
	case faults.Isolated:
		return w.isolated[m]
	}
	return false
}

// actOnMember takes a fault action that strikes a member: it draws a
// member among them all and skips the action unless the member is one of
// a.Who (so that m1 stays m1 when rapid drops an earlier action as it
// shrinks, as drawProc does for processes); the schedule names the member
// after the action. An Isolate marks the member cut off, its end (a
// Rejoin) marks it back.
func (w *runWorld) actOnMember(t *rapid.T, a faults.Action) {
	n := w.sw.Members()
	if n < 2 {
		t.SkipNow()
	}
	m := rapid.IntRange(0, n-1).Draw(t, "member")
	if !w.memberIs(a.Who, m) {
		t.SkipNow()
	}
	if k := len(w.actions); k > 0 {
		w.actions[k-1] += fmt.Sprintf(" m%d", m)
	}
	f := a.Make(explorer{t: t, timeout: w.timeout}, m)
	switch {
	case f.Kind == faults.KindIsolate:
		w.isolated[m] = true
	case a.Who == faults.Isolated:
		w.isolated[m] = false
	}
	w.inject(t, f)
}

// restoreMembers ends every member fault, as the liveness phase begins and
// at each of its looks (the calm stretches' swarm may still lag, crash,
// isolate or fail a member): a crashed member restarts, an isolated one
// rejoins, a lagging one catches up, each as a step of its own in the
// trace. A member without a fault is left alone.
func (w *runWorld) restoreMembers(t *rapid.T) {
	n := w.sw.Members()
	if n < 2 {
		return
	}
	e := w.sw.Ensemble()
	for m := range n {
		r := e.Role(m)
		cut := r == zkmem.RoleLooking || r == zkmem.RoleReadOnly
		switch {
		case r == zkmem.RoleDown:
			w.inject(t, faults.Restart(m))
		case w.isolated[m] || (cut && e.Leader() >= 0):
			w.isolated[m] = false
			w.inject(t, faults.Heal(m))
		}
		if w.sw.Lagging(m) {
			w.inject(t, faults.CatchUp(m))
		}
	}
}

// memberApplies returns how many lagging members have a commit to apply
// (each an enabled event of the simulator): 0 on a standalone server.
func (w *runWorld) memberApplies() int {
	n := 0
	for m := range w.sw.Members() {
		if w.sw.Lagging(m) && w.memberIs(faults.Serving, m) && w.sw.Ensemble().Pending(m) > 0 {
			n++
		}
	}
	return n
}

// describeMembers tells, for a failure, what each member is doing.
func (w *runWorld) describeMembers() string {
	e := w.sw.Ensemble()
	var out []string
	for m := range w.sw.Members() {
		s := fmt.Sprintf("m%d %v", m, e.Role(m))
		if w.sw.Lagging(m) {
			s += fmt.Sprintf(" lagging %d commits", e.Pending(m))
		}
		out = append(out, s)
	}
	return "members: " + strings.Join(out, ", ")
}
