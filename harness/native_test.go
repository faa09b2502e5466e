package harness_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/harness"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/lock"
)

// A user of the recipes' lock.Mutex on Native clients, some of them
// Renewing (a library that replaces an expired session at once, as
// Curator's does). trustFlag is the planted bug: the user believes it
// holds from the moment Lock returned until it unlocks, whatever the
// Mutex's State says.
type locker struct {
	m         *lock.Mutex
	trustFlag bool
	flag      atomic.Bool // Lock returned nil, Unlock has not
	liveDone  atomic.Bool // locked and unlocked once faults stopped
}

func (l *locker) holds() bool {
	if l.trustFlag {
		return l.flag.Load()
	}
	return l.m.State() == recipes.Held
}

func lockerMachine(trustFlag bool) harness.Machine[*locker] {
	lockOp := func(p *harness.Process[*locker]) bool {
		l := p.Obj()
		return p.Go("lock", func(ctx context.Context) error {
			err := l.m.Lock(ctx)
			l.flag.Store(err == nil)
			return err
		})
	}
	unlockOp := func(p *harness.Process[*locker], live bool) bool {
		l := p.Obj()
		if st := l.m.State(); p.Busy("") || (st != recipes.Held && st != recipes.Doubtful) {
			return false // nothing to unlock
		}
		l.flag.Store(false) // it lets go as it calls Unlock
		return p.Go("unlock", func(ctx context.Context) error {
			err := l.m.Unlock(ctx)
			if err == nil && live {
				l.liveDone.Store(true)
			}
			return err
		})
	}
	return harness.Machine[*locker]{
		Name:     "locker",
		Renewing: true,
		Setup: func(ctx context.Context, c zksim.Conn) error {
			_, err := c.Create(ctx, "/lock", nil, zksim.ModePersistent, zksim.OpenACL())
			return err
		},
		New: func(p *harness.Process[*locker]) *locker {
			return &locker{m: lock.New(p.Conn(), "/lock"), trustFlag: trustFlag}
		},
		Ops: map[string]func(*rapid.T, *harness.Process[*locker]){
			"Lock": func(t *rapid.T, p *harness.Process[*locker]) {
				if p.Busy("") || !lockOp(p) {
					t.SkipNow()
				}
			},
			"Unlock": func(t *rapid.T, p *harness.Process[*locker]) {
				if !unlockOp(p, false) {
					t.SkipNow()
				}
			},
		},
		Invariants: []harness.Invariant[*locker]{{
			Name: "two holders",
			Check: func(w *harness.World[*locker]) error {
				var holders []int
				for _, p := range w.Processes() {
					if p.Obj().holds() && p.SessionLive() {
						holders = append(holders, p.Index())
					}
				}
				if len(holders) > 1 {
					return fmt.Errorf("processes %v hold on live sessions", holders)
				}
				return nil
			},
		}},
		Liveness: func(p *harness.Process[*locker]) {
			if l := p.Obj(); !l.liveDone.Load() && !unlockOp(p, true) && !p.Busy("") {
				lockOp(p)
			}
		},
		Eventually: []harness.Invariant[*locker]{{
			Name: "every process locks",
			Check: func(w *harness.World[*locker]) error {
				for _, p := range w.Processes() {
					if !p.Obj().liveDone.Load() {
						return fmt.Errorf("p%d has not locked and unlocked", p.Index())
					}
				}
				return nil
			},
		}},
	}
}

// The recipes' Mutex keeps its users apart, on Native and Renewing
// clients, and every user locks once faults stop.
func TestLockerExplored(t *testing.T) {
	harness.Check(t, lockerMachine(false))
}

// A user who trusts Lock's return over the Mutex's State is caught: its
// session expires (or its Renewing client renews it) while it believes
// it holds.
func TestLockerTrustingItsFlagIsCaught(t *testing.T) {
	c := harness.ExpectCaught(t, lockerMachine(true), "two holders")
	require.NotEmpty(t, c.Schedule)
}
