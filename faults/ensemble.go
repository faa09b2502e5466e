package faults

import (
	"fmt"
	"time"

	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// The faults of a World over a zkmem ensemble (sim.Config.Members > 1):
// rows of the catalogue like the others, which Swarm and Mix draw only for
// such a World. Each calls the primitive of sim.Faults of the same name.

// AnyMember as a fault's Member has the member drawn from the World's
// fault generator when the fault strikes, among those the fault can
// strike (see each constructor); with none, the fault is not injected.
const AnyMember = -1

// Outcome is what becomes of the write that fails the leader.
type Outcome uint8

const (
	// AnyOutcome: drawn from the World's fault generator when the fault
	// strikes.
	AnyOutcome Outcome = iota
	// Committed: the write commits before the leader fails.
	Committed
	// Lost: the write is lost with the leader.
	Lost
)

// String returns "committed", "lost" or "?" (AnyOutcome).
func (o Outcome) String() string {
	switch o {
	case AnyOutcome:
		return "?"
	case Committed:
		return "committed"
	case Lost:
		return "lost"
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// Lag makes member m (AnyMember: a follower that serves and does not lag)
// stop applying commits: each of its next commits is applied by an event
// of the scheduler, and its clients read stale data meanwhile.
func Lag(m int) StepFault { return StepFault{Kind: KindLag, Member: m} }

// CatchUp makes member m (AnyMember: one that lags) apply every commit it
// lags behind, and keep up from then on.
func CatchUp(m int) StepFault { return StepFault{Kind: KindCatchUp, Member: m} }

// Crash stops member m (AnyMember: one that serves) for d (until a Restart
// fault if d < 0); a crashed leader starts an election.
func Crash(m int, d time.Duration) StepFault {
	return StepFault{Kind: KindCrash, Member: m, For: d}
}

// Restart starts a crashed member again.
func Restart(m int) StepFault { return StepFault{Kind: KindRestart, Member: m} }

// Isolate cuts member m (AnyMember: one that serves) off from the quorum
// for d (until a Heal fault if d < 0); an isolated leader starts an
// election.
func Isolate(m int, d time.Duration) StepFault {
	return StepFault{Kind: KindIsolate, Member: m, For: d}
}

// Heal ends an isolation.
func Heal(m int) StepFault { return StepFault{Kind: KindHeal, Member: m} }

// FailLeader makes the leader fail as the next write reaches it, the write
// committed or lost as o says (AnyOutcome: drawn when the fault strikes).
func FailLeader(o Outcome) StepFault { return StepFault{Kind: KindFailLeader, Outcome: o} }

func memberName(m int) string {
	if m == AnyMember {
		return "m?"
	}
	return fmt.Sprintf("m%d", m)
}

// resolveMember draws what f leaves to the World's fault generator: its
// member among those of target t, or its outcome. It returns nil when no
// member fits.
func resolveMember(w *sim.World, f StepFault, t target) sim.StepFault {
	if f.Kind == KindFailLeader {
		if f.Outcome == AnyOutcome {
			f.Outcome = Committed + Outcome(w.Rand().IntN(2))
		}
		return f
	}
	if f.Member != AnyMember {
		return f
	}
	e := w.Ensemble()
	if e == nil {
		return nil
	}
	var fit []int
	for m := range w.Members() {
		r := e.Role(m)
		serves := r == zkmem.RoleLeader || r == zkmem.RoleFollower || r == zkmem.RoleObserver
		switch {
		case t == follower && serves && r != zkmem.RoleLeader && !w.Lagging(m),
			t == lagging && w.Lagging(m),
			t == member && serves:
			fit = append(fit, m)
		}
	}
	if len(fit) == 0 {
		return nil
	}
	f.Member = fit[w.Rand().IntN(len(fit))]
	return f
}
