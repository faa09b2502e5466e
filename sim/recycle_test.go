package sim_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/sim"
)

// A client's request record serves its next call once the reply is in,
// but not after the caller gave up on it: the World still holds that
// request, applies it and delivers its reply later, and the calls that
// follow get their own results.
func TestAbandonedCallIsNotReused(t *testing.T) {
	sim.Test(t, sim.Config{Seed: 1, Clients: 1}, func(t *testing.T, w *sim.World) {
		c := w.Conn(0)
		type got struct {
			data string
			err  error
		}
		var first, second, third box[got]
		for _, p := range []string{"/a", "/b"} { // not through the scheduler
			if _, err := c.Underlying().Create(context.Background(), p, []byte(p), zksim.ModePersistent, zksim.OpenACL()); err != nil {
				t.Fatal(err)
			}
		}
		gctx, cancel := context.WithCancel(context.Background())
		w.Go(func(ctx context.Context) {
			d, _, err := c.Get(gctx, "/a") // sent, then abandoned before it is applied
			first.put(got{string(d), err})
			d, _, err = c.Get(ctx, "/b")
			second.put(got{string(d), err})
			d, _, err = c.Get(ctx, "/a")
			third.put(got{string(d), err})
		})
		cancel()
		if err := w.Run(nil); !errors.Is(err, sim.ErrIdle) {
			t.Fatalf("Run: %v", err)
		}
		if g := first.get(); !errors.Is(g.err, context.Canceled) {
			t.Errorf("abandoned Get /a: %q, %v; want context.Canceled", g.data, g.err)
		}
		if g := second.get(); g != (got{data: "/b"}) {
			t.Errorf("Get /b after the abandoned Get: %q, %v; want /b", g.data, g.err)
		}
		if g := third.get(); g != (got{data: "/a"}) {
			t.Errorf("Get /a: %q, %v; want /a", g.data, g.err)
		}
		// The abandoned getData of /a is applied first and its reply
		// delivered to nobody, then the two later calls.
		var steps []string
		for _, l := range w.Trace() {
			if i := strings.Index(l, " c0 "); i >= 0 && strings.HasPrefix(l, "step ") {
				steps = append(steps, l[i+1:])
			}
		}
		want := []string{
			"c0 apply getData /a -> 2 bytes v0", "c0 deliver reply getData /a -> 2 bytes v0",
			"c0 apply getData /b -> 2 bytes v0", "c0 deliver reply getData /b -> 2 bytes v0",
			"c0 apply getData /a -> 2 bytes v0", "c0 deliver reply getData /a -> 2 bytes v0",
		}
		if !slices.Equal(steps, want) {
			t.Errorf("steps of c0:\n%s\nwant:\n%s", strings.Join(steps, "\n"), strings.Join(want, "\n"))
		}
	})
}

// A client's calls reuse its request record and the record's channel: a
// getData costs the World no allocation of its own beyond what zkmem
// returns (the Stat, the data) and the call's closure. One was the
// request and one its channel, at every call.
func TestCallsReuseTheirRecord(t *testing.T) {
	sim.Test(t, sim.Config{Seed: 1, Clients: 1, NoTrace: true}, func(t *testing.T, w *sim.World) {
		c := w.Conn(0)
		if _, err := c.Underlying().Create(context.Background(), "/a", []byte("a"), zksim.ModePersistent, zksim.OpenACL()); err != nil {
			t.Fatal(err)
		}
		w.Go(func(ctx context.Context) {
			for ctx.Err() == nil {
				if _, _, err := c.Get(ctx, "/a"); err != nil {
					return
				}
			}
		})
		step := func() {
			if err := w.Step(); err != nil {
				t.Fatal(err)
			}
		}
		step() // the first call's record
		// A getData is two steps: apply, deliver.
		if n := testing.AllocsPerRun(1000, func() { step(); step() }); n > 3 {
			t.Errorf("%v allocations a getData, want at most 3 (closure, Stat, data)", n)
		}
	})
}
