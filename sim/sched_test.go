package sim_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/sim"
)

var open = zksim.OpenACL()

// box holds a value set by a client goroutine.
type box[T any] struct {
	mu  sync.Mutex
	set bool
	v   T
}

func (b *box[T]) put(v T) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.v, b.set = v, true
}

func (b *box[T]) ok() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.set
}

func (b *box[T]) get() T {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.v
}

func run(t *testing.T, w *sim.World, until func() bool) {
	t.Helper()
	if err := w.Run(until); err != nil {
		t.Fatalf("run: %v", err)
	}
}

// A session hears of a watch event its own request caused before it gets
// the reply (one FIFO per session, as on one TCP connection).
func TestOwnWatchEventBeforeReply(t *testing.T) {
	for seed := range uint64(10) {
		sim.Test(t, sim.Config{Seed: seed, Clients: 1}, func(t *testing.T, w *sim.World) {
			c := w.Conn(0)
			var firedFirst box[bool]
			w.Go(func(ctx context.Context) {
				_, _, ch, err := c.ExistsW(ctx, "/x")
				if err != nil {
					return
				}
				c.Create(ctx, "/x", nil, zksim.ModePersistent, open)
				select {
				case <-ch:
					firedFirst.put(true)
				default:
					firedFirst.put(false)
				}
			})
			run(t, w, firedFirst.ok)
			if !firedFirst.get() {
				t.Fatal("the create's reply arrived before the NodeCreated event it caused")
			}
			tr := w.TraceString()
			if ev, rep := strings.Index(tr, "deliver event EventNodeCreated /x"), strings.Index(tr, "deliver reply create /x"); ev < 0 || rep < ev {
				t.Fatalf("trace does not deliver the event before the reply:\n%s", tr)
			}
		})
	}
}

// The client's State follows what was delivered to it, not the server.
func TestStateLagsUntilDelivered(t *testing.T) {
	sim.Test(t, sim.Config{Seed: 1, Clients: 1}, func(t *testing.T, w *sim.World) {
		c := w.Conn(0)
		if err := w.Faults().Disconnect(0, -1); err != nil {
			t.Fatal(err)
		}
		if got := c.Underlying().State(); got != zksim.StateDisconnected {
			t.Fatalf("zkmem state %v, want Disconnected", got)
		}
		if got := c.State(); got != zksim.StateConnected {
			t.Fatalf("client state %v before delivery, want still Connected", got)
		}
		if err := w.Step(); err != nil {
			t.Fatal(err)
		}
		if got := c.State(); got != zksim.StateDisconnected {
			t.Fatalf("client state %v after delivery, want Disconnected", got)
		}
		if err := w.Faults().Reconnect(0); err != nil {
			t.Fatal(err)
		}
		run(t, w, func() bool { return c.State() == zksim.StateConnected })
	})
}

// Run reports ErrIdle when nothing can happen, after IdleTimeout of virtual
// time; RunFor lets exactly the given virtual time pass.
func TestIdleAndRunFor(t *testing.T) {
	sim.Test(t, sim.Config{Seed: 1, Clients: 1, IdleTimeout: time.Minute}, func(t *testing.T, w *sim.World) {
		if err := w.RunFor(1500 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if w.Now() != 1500*time.Millisecond {
			t.Fatalf("RunFor(1.5s) ended at %v", w.Now())
		}
		if err := w.Run(nil); !errors.Is(err, sim.ErrIdle) {
			t.Fatalf("Run with nothing to do = %v, want ErrIdle", err)
		}
		if w.Now() != 1500*time.Millisecond+time.Minute {
			t.Fatalf("idle after %v, want IdleTimeout (1m) later", w.Now())
		}
	})
}

// Client timers drive virtual time: a client that sleeps 3s between two
// requests makes Run advance exactly that much.
func TestClientTimersAdvanceTime(t *testing.T) {
	sim.Test(t, sim.Config{Seed: 1, Clients: 1}, func(t *testing.T, w *sim.World) {
		c := w.Conn(0)
		var at box[time.Duration]
		w.Go(func(ctx context.Context) {
			c.Create(ctx, "/a", nil, zksim.ModePersistent, open)
			time.Sleep(3 * time.Second)
			c.Create(ctx, "/b", nil, zksim.ModePersistent, open)
			at.put(w.Now())
		})
		run(t, w, at.ok)
		if at.get() != 3*time.Second {
			t.Fatalf("second create done at %v, want 3s", at.get())
		}
		if !strings.Contains(w.TraceString(), "advance +3s") {
			t.Fatalf("no advance step in the trace:\n%s", w.TraceString())
		}
	})
}

// A call whose context ends while it is pending returns ctx.Err(), and the
// request may still be applied later; Close unblocks pending calls with
// ErrClosing.
func TestCanceledCallStillAppliedAndCloseUnblocks(t *testing.T) {
	sim.Test(t, sim.Config{Seed: 1, Clients: 2}, func(t *testing.T, w *sim.World) {
		c0, c1 := w.Conn(0), w.Conn(1)
		if err := w.Faults().Pause(0, 2*time.Second); err != nil {
			t.Fatal(err)
		}
		var createErr, pendingErr box[error]
		var failedAt box[time.Duration]
		w.Go(func(ctx context.Context) {
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			_, err := c0.Create(cctx, "/late", nil, zksim.ModePersistent, open)
			failedAt.put(w.Now())
			createErr.put(err)
			w.Wake() // let Run look at createErr now
		})
		run(t, w, createErr.ok)
		if err := createErr.get(); !errors.Is(err, context.DeadlineExceeded) || failedAt.get() != time.Second {
			t.Fatalf("create of a paused client with a 1s deadline: %v at %v", err, failedAt.get())
		}
		if w.Now() != time.Second {
			t.Errorf("Run saw the failure at %v, want 1s (Wake)", w.Now())
		}
		var exists box[bool]
		w.Go(func(ctx context.Context) {
			time.Sleep(3 * time.Second)
			ok, _, _ := c1.Exists(ctx, "/late")
			exists.put(ok)
		})
		run(t, w, exists.ok)
		if !exists.get() {
			t.Fatal("the abandoned create was not applied after the client resumed")
		}
		w.Faults().Pause(1, -1)
		w.Go(func(ctx context.Context) {
			_, _, err := c1.Exists(ctx, "/late")
			pendingErr.put(err)
		})
		w.Close()
		synctestWait()
		if !pendingErr.ok() || !errors.Is(pendingErr.get(), zksim.ErrClosing) {
			t.Fatalf("pending call after Close: %v, want ErrClosing", pendingErr.get())
		}
	})
}

// Two goroutines of one client sending at the same instant are ordered by
// the content of their requests, not by chance.
func TestConcurrentRequestsOfOneClientOrdered(t *testing.T) {
	var first string
	for i := range 20 {
		sim.Test(t, sim.Config{Seed: 4, Clients: 1}, func(t *testing.T, w *sim.World) {
			c := w.Conn(0)
			var n box[int]
			var mu sync.Mutex
			count := 0
			for _, p := range []string{"/b", "/a", "/c"} {
				go func() {
					c.Create(w.Context(), p, nil, zksim.ModePersistentSequential, open)
					mu.Lock()
					count++
					n.put(count)
					mu.Unlock()
				}()
			}
			run(t, w, func() bool { return n.get() == 3 })
			if i == 0 {
				first = w.TraceString()
			} else if tr := w.TraceString(); tr != first {
				t.Fatalf("run %d differs:\n%s\nfirst:\n%s", i, tr, first)
			}
		})
	}
}

func synctestWait() { synctest.Wait() }

// A failing run's report carries the seed and the whole trace.
func TestReportHasSeedAndTrace(t *testing.T) {
	sim.Test(t, sim.Config{Seed: 77, Clients: 1}, func(t *testing.T, w *sim.World) {
		c := w.Conn(0)
		var done box[bool]
		w.Go(func(ctx context.Context) {
			c.Create(ctx, "/r", nil, zksim.ModePersistent, open)
			done.put(true)
		})
		run(t, w, done.ok)
		r := w.Report()
		for _, want := range []string{"seed 77", "2 steps", "step 1 t=0.000s c0 apply create /r -> /r", "step 2 t=0.000s c0 deliver reply create /r -> /r"} {
			if !strings.Contains(r, want) {
				t.Errorf("report lacks %q:\n%s", want, r)
			}
		}
	})
}

// Close ends every call in flight with ErrClosing, wherever its request is:
// sent but not yet taken in, pending (its client paused), in service under
// the cost model, or applied with its reply held in the FIFO (a delivery
// delay); whether the call's context is the World's, one derived from it,
// or context.Background, which nothing cancels.
func TestCloseEndsEveryCallInFlight(t *testing.T) {
	sim.Test(t, sim.Config{Seed: 1, Clients: 4, Cost: sim.CostModel{PerRequest: time.Second}}, func(t *testing.T, w *sim.World) {
		errs := make([]box[error], 5)
		send := func(i, k int, ctx context.Context) {
			_, _, err := w.Conn(i).Exists(ctx, "/x")
			errs[k].put(err)
		}
		// Held in the FIFO: c1's reply waits out a delivery delay.
		if err := w.Faults().Delay(1, time.Hour); err != nil {
			t.Fatal(err)
		}
		w.Go(func(ctx context.Context) { send(1, 1, context.Background()) })
		if err := w.RunFor(2 * time.Second); err != nil {
			t.Fatal(err)
		}
		// In service: c0's request is admitted for a second of service.
		w.Go(func(ctx context.Context) { send(0, 0, ctx) })
		if err := w.Step(); err != nil {
			t.Fatal(err)
		}
		// Pending: c2 is paused.
		if err := w.Faults().Pause(2, -1); err != nil {
			t.Fatal(err)
		}
		w.Go(func(ctx context.Context) {
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			send(2, 2, cctx)
		})
		// Not yet taken in: sent after the World last looked.
		go send(3, 3, context.Background())
		go send(3, 4, w.Context())
		synctestWait()
		for i := range 4 {
			if !w.InFlight(i) {
				t.Fatalf("c%d has nothing in flight before Close", i)
			}
		}
		for k := range errs {
			if errs[k].ok() {
				t.Fatalf("call %d returned before Close: %v", k, errs[k].get())
			}
		}
		w.Close()
		synctestWait()
		for k := range errs {
			if err := errs[k].get(); !errs[k].ok() || !errors.Is(err, zksim.ErrClosing) {
				t.Errorf("call %d after Close: %v (returned %v), want ErrClosing", k, err, errs[k].ok())
			}
		}
		// c0's service time is long over: a goroutine started now, which
		// makes the World look again, must not apply the request Close
		// ended (its caller has its result).
		before := w.TraceString()
		w.Go(func(context.Context) {})
		if added := strings.TrimPrefix(w.TraceString(), before); strings.Contains(added, " apply ") {
			t.Errorf("a request was applied after Close:\n%s", added)
		}
	})
}
