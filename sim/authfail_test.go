package sim_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// A client whose reconnection fails authentication hears Disconnected then
// AuthFailed, never reconnects, and every call of it fails with
// ErrAuthFailed without reaching the server; its session lives on at the
// server until the session timeout, then its ephemeral node goes.
func TestFailAuthOnReconnect(t *testing.T) {
	trace := func(seed uint64) string {
		var out string
		sim.Test(t, sim.Config{Seed: seed, Clients: 2, SessionTimeout: 4 * time.Second, ReconnectDelay: 100 * time.Millisecond}, func(t *testing.T, w *sim.World) {
			out = failAuthScenario(t, w)
		})
		return out
	}
	first := trace(7)
	if !strings.Contains(first, "c0 reconnect: authentication failed -> StateAuthFailed") ||
		!strings.Contains(first, "c0 deliver state StateAuthFailed") ||
		!strings.Contains(first, "FailAuth(c0)") {
		t.Errorf("trace lacks the failed authentication:\n%s", first)
	}
	if again := trace(7); again != first {
		t.Errorf("same seed, another trace:\n%s\n---\n%s", first, again)
	}
}

// failAuthScenario runs the scenario of TestFailAuthOnReconnect and returns
// the World's trace.
func failAuthScenario(t *testing.T, w *sim.World) string {
	c, other := w.Conn(0), w.Conn(1)
	var states box[[]zksim.State]
	events := c.SessionEvents(w.Context())
	w.Go(func(ctx context.Context) {
		var seen []zksim.State
		for ev := range events {
			seen = append(seen, ev.State)
			states.put(slices.Clone(seen))
		}
	})
	var created box[error]
	w.Go(func(ctx context.Context) {
		_, err := c.Create(ctx, "/e", nil, zksim.ModeEphemeral, open)
		created.put(err)
	})
	run(t, w, created.ok)
	if err := created.get(); err != nil {
		t.Fatalf("create: %v", err)
	}
	session := c.SessionID()
	var watched box[<-chan zksim.Event]
	w.Go(func(ctx context.Context) {
		_, _, ch, err := c.ExistsW(ctx, "/w")
		if err != nil {
			t.Errorf("existsW: %v", err)
		}
		watched.put(ch)
	})
	run(t, w, watched.ok)
	watch := watched.get()
	if err := w.Inject(faults.FailAuth(0)); err != nil {
		t.Fatal(err)
	}
	if err := w.Inject(faults.Disconnect(0, 100*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	// A call sent while the connection is down fails with connection
	// loss; the reconnection then fails authentication.
	var lost box[error]
	w.Go(func(ctx context.Context) {
		_, _, err := c.Get(ctx, "/e")
		lost.put(err)
	})
	// A watch set before ends with EventNotWatching (ErrAuthFailed).
	var ended box[zksim.Event]
	w.Go(func(ctx context.Context) { ended.put(<-watch) })
	run(t, w, func() bool { return slices.Contains(states.get(), zksim.StateAuthFailed) })
	run(t, w, ended.ok)
	if ev := ended.get(); ev.Type != zksim.EventNotWatching || !errors.Is(ev.Err, zksim.ErrAuthFailed) {
		t.Errorf("watch event %+v, want EventNotWatching with ErrAuthFailed", ev)
	}
	if err := lost.get(); !errors.Is(err, zksim.ErrConnectionLoss) {
		t.Errorf("call while disconnected: %v, want ErrConnectionLoss", err)
	}
	if got := states.get(); !slices.Equal(got, []zksim.State{zksim.StateDisconnected, zksim.StateAuthFailed}) {
		t.Errorf("session events %v, want Disconnected, AuthFailed", got)
	}
	if c.State() != zksim.StateAuthFailed || !w.AuthFailed(0) || c.SessionID() != session {
		t.Errorf("after the failure: state %v, AuthFailed %v, session %#x (was %#x)", c.State(), w.AuthFailed(0), c.SessionID(), session)
	}
	// Every later call fails with ErrAuthFailed, at once.
	var failed box[[]error]
	w.Go(func(ctx context.Context) {
		_, _, err1 := c.Exists(ctx, "/e")
		_, err2 := c.Create(ctx, "/f", nil, zksim.ModePersistent, open)
		failed.put([]error{err1, err2})
	})
	before := w.Now()
	run(t, w, failed.ok)
	for _, err := range failed.get() {
		if !errors.Is(err, zksim.ErrAuthFailed) {
			t.Errorf("call after the failure: %v, want ErrAuthFailed", err)
		}
	}
	if w.Now() != before {
		t.Errorf("the refused calls took %v", w.Now()-before)
	}
	// The session lives on at the server, unheard, then expires: its
	// ephemeral node goes; the client is told nothing more.
	exists := func() bool {
		var found box[bool]
		w.Go(func(ctx context.Context) {
			ok, _, err := other.Exists(ctx, "/e")
			if err != nil {
				t.Errorf("exists: %v", err)
			}
			found.put(ok)
		})
		run(t, w, found.ok)
		return found.get()
	}
	if !exists() {
		t.Errorf("the ephemeral node went with the failed authentication")
	}
	if err := w.RunFor(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if exists() {
		t.Errorf("the ephemeral node outlived the session timeout")
	}
	if !w.Live(1) || w.Live(0) {
		t.Errorf("live: c0 %v c1 %v, want the failed session expired", w.Live(0), w.Live(1))
	}
	if got := states.get(); len(got) != 2 {
		t.Errorf("session events after the expiry: %v", got)
	}
	if got := w.Coverage()[sim.CoverageKey{Area: "/e", Op: zkmem.OpExists, Fault: "AuthFailed"}]; got != 1 {
		t.Errorf("coverage: %d exists refused, want 1", got)
	}
	// Close sends nothing and returns nil.
	var closed box[error]
	w.Go(func(ctx context.Context) { closed.put(c.Close()) })
	run(t, w, closed.ok)
	if err := closed.get(); err != nil {
		t.Errorf("close: %v", err)
	}
	if err := w.Inject(faults.FailAuth(0)); !errors.Is(err, sim.ErrGone) {
		t.Errorf("FailAuth on an expired session: %v, want ErrGone", err)
	}
	return w.TraceString()
}
