package sim

import (
	"testing/synctest"
	"time"
)

// The ensemble's faults, on a World with Config.Members > 1. Each fails
// with ErrNotEnsemble on a standalone World, and for a member out of
// range. A client that loses its member moves to the next member of its
// list that accepts it, and hears Disconnected then Connected; one that
// finds none stays disconnected until a change lets a member take it.
// Losing the leader starts an election, which ends half a second later
// with a step of its own ("m2 elected leader"), or finds no quorum (a
// Restart or Heal that brings one back starts another).

// Lag makes member m stop applying commits: they queue, and applying the
// next one becomes an event of the scheduler, drawn like the others (or
// chosen by Config.Choose), until CatchUp, a restart, a heal or an
// election. Its clients read its stale state meanwhile; their writes and
// syncs wait for it.
func (f *Faults) Lag(m int) error {
	return f.ensAction(m, func(es *ensState) {
		f.w.strikeMember(m, "Lag")
		if !es.lagging[m] {
			es.lagging[m] = true
			es.nLag++
		}
		es.e.Lag(m)
	})
}

// CatchUp makes member m apply every commit it lags behind, one by one
// (the calls waiting for each are answered as it is applied), and apply
// commits as they come from now on.
func (f *Faults) CatchUp(m int) error {
	return f.ensAction(m, func(es *ensState) {
		for es.e.ApplyNext(m) {
			synctest.Wait()
			f.w.collectParked()
		}
		es.e.CatchUp(m)
		es.endLag(m)
	})
}

// Crash stops member m: its clients move to other members, their calls
// waiting for it fail with ErrConnectionLoss. With d >= 0 it restarts
// after d; with d < 0 it stays down until Restart. A crashed leader starts
// an election.
func (f *Faults) Crash(m int, d time.Duration) error {
	return f.ensAction(m, func(es *ensState) {
		f.w.strikeMember(m, "Crash")
		es.gen[m]++
		es.e.Crash(m)
		f.after(m, d, "restarts", es.e.Restart)
	})
}

// Restart starts crashed member m again: it catches up from the leader.
func (f *Faults) Restart(m int) error {
	return f.ensAction(m, func(es *ensState) {
		es.gen[m]++
		es.e.Restart(m)
		es.endLag(m)
	})
}

// Isolate cuts member m off from the quorum (a partition with m in the
// minority): it stops applying and its clients move to other members.
// With d >= 0 it heals after d; with d < 0 it stays cut off until Heal.
// Isolating the leader starts an election.
func (f *Faults) Isolate(m int, d time.Duration) error {
	return f.ensAction(m, func(es *ensState) {
		f.w.strikeMember(m, "Isolate")
		es.gen[m]++
		es.e.Isolate(m)
		f.after(m, d, "heals", es.e.Heal)
	})
}

// Heal ends Isolate: member m rejoins and catches up from the leader.
func (f *Faults) Heal(m int) error {
	return f.ensAction(m, func(es *ensState) {
		es.gen[m]++
		es.e.Heal(m)
		f.w.syncLag(m)
	})
}

// FailLeader makes the leader fail as the next write reaches it: with
// committed the write commits first, else it is lost; its client gets
// ErrConnectionLoss, every client is disconnected, and an election starts.
// A policy draws committed from the World's fault generator.
func (f *Faults) FailLeader(committed bool) error {
	es := f.w.ens
	if es == nil {
		return ErrNotEnsemble
	}
	es.failing = true
	es.e.FailLeaderOnNextWrite(committed)
	return nil
}

// after schedules what ends a crash or an isolation of m, d from now
// (never for d < 0), unless another control of m comes first.
func (f *Faults) after(m int, d time.Duration, what string, end func(int)) {
	if d < 0 {
		return
	}
	w := f.w
	es := w.ens
	gen := es.gen[m]
	w.schedule(w.now+d, &timed{kind: tEnsemble, fn: func() {
		if es.gen[m] != gen {
			return
		}
		snap := w.ensSnapshot()
		es.gen[m]++
		end(m)
		synctest.Wait()
		if what == "heals" {
			w.syncLag(m)
		} else {
			es.endLag(m)
		}
		w.stepf("m%d %s", m, what)
		w.ensReconcile(snap)
	}})
}
