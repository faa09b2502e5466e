package faults_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/lock"
	"github.com/zksim/zksim/sim"
)

// Disconnect then reconnect to the same session: the ephemeral survives, and
// the watches come back by the setWatches rules: an exists watch on a node
// created meanwhile fires NodeCreated, a data watch on a node changed
// meanwhile fires NodeDataChanged, both after the reconnect.
func TestDisconnectReconnectRestoresWatches(t *testing.T) {
	sim.Test(t, sim.Config{Seed: 3, Clients: 2}, func(t *testing.T, w *sim.World) {
		c0, c1 := w.Conn(0), w.Conn(1)
		var watches record[<-chan zksim.Event]
		w.Go(func(ctx context.Context) {
			c1.Create(ctx, "/d", []byte("1"), zksim.ModePersistent, open)
			c0.Create(ctx, "/mine", nil, zksim.ModeEphemeral, open)
			_, _, created, _ := c0.ExistsW(ctx, "/new")
			_, _, changed, _ := c0.GetW(ctx, "/d")
			watches.add(created)
			watches.add(changed)
		})
		mustRun(t, w, func() bool { return watches.len() == 2 })
		st := watchStates(w, c0)
		if err := w.Inject(faults.Disconnect(0, time.Second)); err != nil {
			t.Fatal(err)
		}
		var events record[stamped[zksim.Event]]
		for _, ch := range watches.get() {
			w.Go(func(ctx context.Context) {
				if ev, ok := <-ch; ok {
					events.add(stamped[zksim.Event]{w.Now(), ev})
				}
			})
		}
		var done flag
		w.Go(func(ctx context.Context) {
			time.Sleep(100 * time.Millisecond)
			c1.Create(ctx, "/new", nil, zksim.ModePersistent, open)
			c1.Set(ctx, "/d", []byte("2"), -1)
			done.set()
		})
		mustRun(t, w, func() bool { return done.get() && events.len() == 2 })
		if got := states(st); len(got) != 2 || got[0] != zksim.StateDisconnected || got[1] != zksim.StateConnected {
			t.Fatalf("c0 states %v, want Disconnected, Connected", got)
		}
		types := map[zksim.EventType]bool{}
		for _, e := range events.get() {
			types[e.v.Type] = true
			if e.at < time.Second {
				t.Errorf("%v fired at %v, before the reconnect at 1s", e.v, e.at)
			}
		}
		if !types[zksim.EventNodeCreated] || !types[zksim.EventNodeDataChanged] {
			t.Fatalf("events %v, want NodeCreated and NodeDataChanged from setWatches", events.get())
		}
		var owner record[int64]
		w.Go(func(ctx context.Context) {
			_, st, err := c1.Exists(ctx, "/mine")
			if err == nil && st != nil {
				owner.add(st.EphemeralOwner)
			}
		})
		mustRun(t, w, func() bool { return owner.len() == 1 })
		if owner.get()[0] != c0.SessionID() {
			t.Fatal("c0's ephemeral did not survive a disconnect shorter than the session timeout")
		}
	})
}

// Expiry: the server deletes the ephemerals at once and other sessions'
// watches fire; the client learns only when it reconnects, then every call
// fails with ErrSessionExpired.
func TestExpireDeletesEphemeralsClientLearnsOnReconnect(t *testing.T) {
	cfg := sim.Config{Seed: 5, Clients: 2, ReconnectDelay: 2 * time.Second}
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		c0, c1 := w.Conn(0), w.Conn(1)
		var watch record[<-chan zksim.Event]
		w.Go(func(ctx context.Context) {
			c0.Create(ctx, "/e", nil, zksim.ModeEphemeral, open)
			_, _, ch, _ := c1.ExistsW(ctx, "/e")
			watch.add(ch)
		})
		mustRun(t, w, func() bool { return watch.len() == 1 })
		st := watchStates(w, c0)
		var deleted record[stamped[zksim.Event]]
		w.Go(func(ctx context.Context) {
			ev := <-watch.get()[0]
			deleted.add(stamped[zksim.Event]{w.Now(), ev})
		})
		if err := w.Inject(faults.Expire(0)); err != nil {
			t.Fatal(err)
		}
		mustRun(t, w, func() bool { return deleted.len() == 1 && len(states(st)) == 2 })
		if ev := deleted.get()[0]; ev.v.Type != zksim.EventNodeDeleted || ev.at != 0 {
			t.Fatalf("c1's watch got %v at %v, want NodeDeleted at once", ev.v, ev.at)
		}
		got := st.get()
		if got[0].v != zksim.StateDisconnected || got[1].v != zksim.StateExpired {
			t.Fatalf("c0 states %v, want Disconnected, Expired", states(st))
		}
		if got[1].at != 2*time.Second {
			t.Errorf("c0 learned of the expiry at %v, want at its reconnect (2s)", got[1].at)
		}
		var errs record[error]
		w.Go(func(ctx context.Context) {
			_, err := c0.Create(ctx, "/again", nil, zksim.ModePersistent, open)
			errs.add(err)
		})
		mustRun(t, w, func() bool { return errs.len() == 1 })
		if err := errs.get()[0]; !errors.Is(err, zksim.ErrSessionExpired) {
			t.Fatalf("call after expiry: %v, want ErrSessionExpired", err)
		}
		if w.Live(0) {
			t.Error("World.Live(0) after expiry")
		}
	})
}

// A process pause longer than the session timeout: the session expires,
// another client takes the lock while the paused holder still believes it
// holds it; after resuming, the old holder learns it lost the lock, and the
// fencing token tells the resource to refuse its writes.
func TestPauseHolderOutlivesItsSession(t *testing.T) {
	cfg := sim.Config{Seed: 7, Clients: 2, SessionTimeout: 4 * time.Second}
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		c0, c1 := w.Conn(0), w.Conn(1)
		m0, m1 := lock.New(c0, "/lock"), lock.New(c1, "/lock")
		var held0, held1 flag
		w.Go(func(ctx context.Context) {
			if m0.Lock(ctx) == nil {
				held0.set()
			}
		})
		mustRun(t, w, held0.get)
		w.Go(func(ctx context.Context) {
			if m1.Lock(ctx) == nil {
				held1.set()
			}
		})
		if err := w.Inject(faults.Pause(0, 10*time.Second)); err != nil {
			t.Fatal(err)
		}
		mustRun(t, w, held1.get)
		// The simulator expires a silent session 1ns before zkmem's own timer
		// would, so that the scheduler, not a timer goroutine, does it.
		if now := w.Now(); now != 4*time.Second-time.Nanosecond {
			t.Errorf("c1 took the lock at %v, want at c0's session timeout (4s - 1ns)", now)
		}
		if s := m0.State(); s != recipes.Held {
			t.Fatalf("paused c0's lock state is %v while c1 holds: a paused process cannot know", s)
		}
		if !w.Paused(0) || w.Live(0) {
			t.Fatalf("c0 paused=%v live=%v, want paused and expired", w.Paused(0), w.Live(0))
		}
		if m0.Token() >= m1.Token() {
			t.Fatalf("fencing tokens: old holder %d, new holder %d; want old < new", m0.Token(), m1.Token())
		}
		mustRun(t, w, func() bool { return m0.State() == recipes.Lost })
		if now := w.Now(); now < 10*time.Second {
			t.Errorf("c0 learned it lost the lock at %v, before resuming at 10s", now)
		}
		if m1.State() != recipes.Held {
			t.Errorf("c1's lock state %v after c0 resumed, want Held", m1.State())
		}
	})
}

// Delayed delivery reorders across sessions: both clients watch /x, the
// delayed one hears of the change 2s later, and its own FIFO keeps order
// (the event before the reply of a later read).
func TestDelayReordersAcrossSessions(t *testing.T) {
	sim.Test(t, sim.Config{Seed: 9, Clients: 3}, func(t *testing.T, w *sim.World) {
		c0, c1, c2 := w.Conn(0), w.Conn(1), w.Conn(2)
		var chans record[<-chan zksim.Event]
		w.Go(func(ctx context.Context) {
			c2.Create(ctx, "/x", []byte("a"), zksim.ModePersistent, open)
			_, _, ch0, _ := c0.GetW(ctx, "/x")
			_, _, ch1, _ := c1.GetW(ctx, "/x")
			chans.add(ch0)
			chans.add(ch1)
		})
		mustRun(t, w, func() bool { return chans.len() == 2 })
		if err := w.Inject(faults.Delay(1, 2*time.Second)); err != nil {
			t.Fatal(err)
		}
		var seen record[stamped[int]]
		var order record[string]
		for i, ch := range chans.get() {
			w.Go(func(ctx context.Context) {
				<-ch
				seen.add(stamped[int]{w.Now(), i})
			})
		}
		w.Go(func(ctx context.Context) {
			c2.Set(ctx, "/x", []byte("b"), -1)
			data, _, _ := c1.Get(ctx, "/x") // c1's reply queues behind its event
			select {
			case <-chans.get()[1]:
			default:
				order.add("reply before event")
			}
			order.add(string(data))
		})
		mustRun(t, w, func() bool { return seen.len() == 2 && order.len() >= 1 })
		got := seen.get()
		if got[0].v != 0 || got[0].at != 0 || got[1].v != 1 || got[1].at != 2*time.Second {
			t.Fatalf("watch events %v, want c0 at 0s, then c1 at 2s", got)
		}
		if o := order.get(); o[0] != "b" {
			t.Fatalf("c1: %v, want its watch event before the reply of its later read", o)
		}
	})
}

// The cost model: a request takes PerRequest plus PerByte per byte of
// virtual time; SlowServer adds to it for a while; Slow adds to the
// requests a predicate picks.
func TestCostModelAndSlowServer(t *testing.T) {
	cfg := sim.Config{
		Seed: 1, Clients: 1,
		Cost:   sim.CostModel{PerRequest: 2 * time.Millisecond, PerByte: time.Microsecond},
		Policy: faults.Slow(50 * time.Millisecond).If(faults.OnPath("/slow")),
	}
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		c := w.Conn(0)
		var took record[time.Duration]
		call := func(f func(ctx context.Context)) time.Duration {
			n := took.len()
			w.Go(func(ctx context.Context) {
				start := w.Now()
				f(ctx)
				took.add(w.Now() - start)
			})
			mustRun(t, w, func() bool { return took.len() == n+1 })
			return took.get()[n]
		}
		data := make([]byte, 98) // with the path "/x": 100 bytes
		if d := call(func(ctx context.Context) { c.Create(ctx, "/x", data, zksim.ModePersistent, open) }); d != 2100*time.Microsecond {
			t.Errorf("create of 100 bytes took %v, want 2ms + 100µs", d)
		}
		if d := call(func(ctx context.Context) { c.Exists(ctx, "/slow") }); d != 2*time.Millisecond+5*time.Microsecond+50*time.Millisecond {
			t.Errorf("exists /slow took %v, want 2.005ms + 50ms", d)
		}
		if err := w.Inject(faults.SlowServer(100*time.Millisecond, time.Second)); err != nil {
			t.Fatal(err)
		}
		if d := call(func(ctx context.Context) { c.Exists(ctx, "/x") }); d != 102*time.Millisecond+2*time.Microsecond {
			t.Errorf("exists on a slow server took %v, want 2.002ms + 100ms", d)
		}
		w.RunFor(time.Second)
		if d := call(func(ctx context.Context) { c.Exists(ctx, "/x") }); d != 2*time.Millisecond+2*time.Microsecond {
			t.Errorf("exists after the slow spell took %v, want 2.002ms", d)
		}
	})
}
