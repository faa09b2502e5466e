package sim_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/sim"
)

// createAll has every client create its own node, and returns the trace of
// the run.
func createAll(t *testing.T, cfg sim.Config) string {
	t.Helper()
	var trace string
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		var done box[int]
		for i := range w.NumClients() {
			c := w.Conn(i)
			w.Go(func(ctx context.Context) {
				_, err := c.Create(ctx, fmt.Sprintf("/n%d", i), nil, zksim.ModePersistent, open)
				if err == nil {
					done.put(done.get() + 1) // the scheduler runs one client at a time
				}
			})
		}
		run(t, w, func() bool { return done.get() == w.NumClients() })
		trace = w.TraceString()
	})
	return trace
}

// applied returns the clients whose create was applied, in order.
func applied(trace string) []string {
	var out []string
	for _, line := range strings.Split(trace, "\n") {
		if i := strings.Index(line, " apply create "); i >= 0 {
			f := strings.Fields(line[:i])
			out = append(out, f[len(f)-1])
		}
	}
	return out
}

// Config.Choose picks the event among the enabled ones in their canonical
// order; a negative answer leaves the choice to the seed.
func TestChooseDecidesTheSchedule(t *testing.T) {
	first := createAll(t, sim.Config{Seed: 1, Clients: 3, Choose: func([]sim.Choice) int { return 0 }})
	if got := fmt.Sprint(applied(first)); got != "[c0 c1 c2]" {
		t.Errorf("Choose always 0 applied %s, want [c0 c1 c2] (sessions in order)", got)
	}
	var offered []string
	last := createAll(t, sim.Config{Seed: 1, Clients: 3, Choose: func(cs []sim.Choice) int { offered = append(offered, fmt.Sprint(cs)); return len(cs) - 1 }})
	// The last enabled event is a delivery as long as one is pending, so
	// each create is applied only once the others' replies are delivered.
	if got := fmt.Sprint(applied(last)); got != "[c2 c1 c0]" {
		t.Errorf("Choose always n-1 applied %s, want [c2 c1 c0]", got)
	}
	// Each event is offered as what it does and to whom: the pick by
	// identity (rather than by position) that a shrinking generator makes.
	if len(offered) < 2 || offered[0] != "[admit c0 admit c1 admit c2]" || offered[1] != "[admit c0 admit c1 deliver c2]" {
		t.Errorf("Choose was offered %q first, want the three creates, then two of them and c2's reply", offered[:min(2, len(offered))])
	}
	seeded := createAll(t, sim.Config{Seed: 5, Clients: 3})
	deferred := createAll(t, sim.Config{Seed: 5, Clients: 3, Choose: func([]sim.Choice) int { return -1 }})
	if seeded != deferred {
		t.Errorf("a Choose that always defers changed the schedule:\n%s\nwant\n%s", deferred, seeded)
	}
}

// An external call is applied by the scheduler, held while its client is
// paused, applied after the client's session expired, and struck by no
// fault.
func TestExternalCall(t *testing.T) {
	cfg := sim.Config{Seed: 3, Clients: 2,
		Policy: faults.LoseReply.Always()}
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		c := w.Conn(0)
		var calls, returned box[int]
		if err := w.Faults().Pause(0, -1); err != nil {
			t.Fatal(err)
		}
		w.Go(func(ctx context.Context) {
			err := c.External(ctx, "write resource", func() error { calls.put(calls.get() + 1); return nil })
			if err == nil {
				returned.put(1)
			}
		})
		if n := w.Enabled(); n != 0 {
			t.Errorf("Enabled with the only caller paused = %d, want 0", n)
		}
		if !w.InFlight(0) || w.InFlight(1) {
			t.Errorf("InFlight = %v, %v; want true for the caller, false for the other", w.InFlight(0), w.InFlight(1))
		}
		if err := w.RunFor(10 * time.Second); err != nil {
			t.Fatal(err)
		}
		if calls.get() != 0 {
			t.Fatalf("the external call of a paused client was applied")
		}
		if w.Live(0) {
			t.Fatalf("the paused client's session outlived its session timeout (4s, the server's minimum)")
		}
		if err := w.Faults().Resume(0); err != nil {
			t.Fatal(err)
		}
		run(t, w, func() bool { return returned.ok() })
		if calls.get() != 1 {
			t.Errorf("external call applied %d times, want 1", calls.get())
		}
		// The client hears of its expiry after the reply (the reply left
		// first); until then that news is in flight.
		if c.State() == zksim.StateExpired || !w.InFlight(0) {
			t.Errorf("state %v, in flight %v at the reply; want the expiry still in flight", c.State(), w.InFlight(0))
		}
		run(t, w, func() bool { return c.State() == zksim.StateExpired })
		if w.InFlight(0) {
			t.Errorf("InFlight after everything was delivered")
		}
		if !strings.Contains(w.TraceString(), "c0 apply external write resource -> ok\n") {
			t.Errorf("trace lacks the external call:\n%s", w.TraceString())
		}
		// After Close, an external call is refused.
		var closeErr, callErr box[error]
		w.Go(func(ctx context.Context) {
			closeErr.put(c.Close())
			callErr.put(c.External(ctx, "late", func() error { calls.put(calls.get() + 1); return nil }))
		})
		run(t, w, func() bool { return callErr.ok() })
		if !errors.Is(callErr.get(), zksim.ErrClosing) || calls.get() != 1 {
			t.Errorf("External after Close: %v (calls %d), want ErrClosing and no call", callErr.get(), calls.get())
		}
	})
}

// A Disconnect with no end that comes after a Reconnect, before the client
// got to its reconnection, cancels it: the client stays down until the next
// Reconnect.
func TestDisconnectAfterReconnectStaysDown(t *testing.T) {
	sim.Test(t, sim.Config{Seed: 1, Clients: 1}, func(t *testing.T, w *sim.World) {
		c := w.Conn(0)
		for _, f := range []func() error{
			func() error { return w.Faults().Disconnect(0, -1) },
			func() error { return w.Faults().Reconnect(0) },
			func() error { return w.Faults().Disconnect(0, -1) },
		} {
			if err := f(); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.RunFor(time.Second); err != nil {
			t.Fatal(err)
		}
		if c.State() != zksim.StateDisconnected {
			t.Fatalf("state %v after Disconnect, Reconnect, Disconnect; want StateDisconnected", c.State())
		}
		if err := w.Faults().Reconnect(0); err != nil {
			t.Fatal(err)
		}
		run(t, w, func() bool { return c.State() == zksim.StateConnected })
		if !strings.Contains(w.TraceString(), "c0 stays disconnected") {
			t.Errorf("trace does not say the first reconnection was dropped:\n%s", w.TraceString())
		}
	})
}

// leftAtOnce is a context that is live when a call checks it first, and
// done right after: the call sends its request and gives up on it at once.
type leftAtOnce struct {
	context.Context
	checked bool
	done    chan struct{}
}

func (c *leftAtOnce) Err() error {
	if !c.checked {
		c.checked = true
		return nil
	}
	return context.Canceled
}

func (c *leftAtOnce) Done() <-chan struct{} { return c.done }

// A request whose caller gave up on it was sent before whatever that
// caller sends next, and is applied first, although the scheduler orders
// the other requests that arrive together by content.
func TestAbandonedRequestKeepsItsPlace(t *testing.T) {
	sim.Test(t, sim.Config{Seed: 1, Clients: 1}, func(t *testing.T, w *sim.World) {
		c := w.Conn(0)
		var done box[error]
		w.Go(func(ctx context.Context) {
			left := &leftAtOnce{Context: ctx, done: make(chan struct{})}
			close(left.done)
			if _, err := c.Create(left, "/z", nil, zksim.ModePersistent, open); !errors.Is(err, context.Canceled) {
				done.put(fmt.Errorf("create /z: %v, want context.Canceled", err))
				return
			}
			_, err := c.Create(ctx, "/a", nil, zksim.ModePersistent, open)
			done.put(err)
		})
		run(t, w, done.ok)
		if err := done.get(); err != nil {
			t.Fatal(err)
		}
		trace := w.TraceString()
		z, a := strings.Index(trace, "apply create /z"), strings.Index(trace, "apply create /a")
		if z < 0 || a < 0 || z > a {
			t.Errorf("want /z (sent first, then abandoned) applied before /a:\n%s", trace)
		}
	})
}

// A paused client whose member crashed meanwhile, and that finds no member
// to take its session when it resumes (the ensemble lost its quorum),
// hears StateDisconnected at once (a real client finds its socket dead):
// its state does not say Connected while no member has its session.
func TestResumeTellsAHiddenDrop(t *testing.T) {
	sim.Test(t, sim.Config{Seed: 1, Clients: 1, Members: 3}, func(t *testing.T, w *sim.World) {
		c := w.Conn(0)
		m := w.Member(0)
		if err := w.Faults().Pause(0, -1); err != nil {
			t.Fatal(err)
		}
		for _, d := range []int{m, (m + 1) % 3} {
			if err := w.Faults().Crash(d, -1); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.RunFor(100 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if c.State() != zksim.StateConnected || w.Member(0) != -1 {
			t.Fatalf("state %v on m%d of a paused client; want StateConnected (it has not been told) on no member", c.State(), w.Member(0))
		}
		if err := w.Faults().Resume(0); err != nil {
			t.Fatal(err)
		}
		if err := w.RunFor(100 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if c.State() != zksim.StateDisconnected {
			t.Fatalf("state %v after Resume on no member; want StateDisconnected\n%s", c.State(), w.TraceString())
		}
	})
}
