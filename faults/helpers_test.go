package faults_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/sim"
)

// record collects values from client goroutines for the test to check.
type record[T any] struct {
	mu   sync.Mutex
	vals []T
}

func (r *record[T]) add(v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.vals = append(r.vals, v)
}

func (r *record[T]) get() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]T(nil), r.vals...)
}

func (r *record[T]) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.vals)
}

// stamped is a value with the virtual time it was seen at.
type stamped[T any] struct {
	at time.Duration
	v  T
}

// watchStates records client c's session state changes with their times.
func watchStates(w *sim.World, c *sim.Conn) *record[stamped[zksim.State]] {
	rec := &record[stamped[zksim.State]]{}
	events := c.SessionEvents(w.Context())
	w.Go(func(ctx context.Context) {
		for ev := range events {
			rec.add(stamped[zksim.State]{w.Now(), ev.State})
		}
	})
	return rec
}

func states(r *record[stamped[zksim.State]]) []zksim.State {
	var out []zksim.State
	for _, s := range r.get() {
		out = append(out, s.v)
	}
	return out
}

// flag is a bool set by a client goroutine.
type flag struct {
	mu sync.Mutex
	on bool
}

func (f *flag) set() {
	f.mu.Lock()
	f.on = true
	f.mu.Unlock()
}

func (f *flag) get() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.on
}

func mustRun(t *testing.T, w *sim.World, until func() bool) {
	t.Helper()
	if err := w.Run(until); err != nil {
		t.Fatalf("run: %v", err)
	}
}

var open = zksim.OpenACL()
