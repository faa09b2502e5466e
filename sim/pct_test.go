package sim_test

import (
	"context"
	"slices"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/sim"
)

// pctRuns has two clients create five sequential nodes each, one after
// another, and returns how many runs of one client's creates the sequence
// order shows (2: one client did all its creates first).
func pctRuns(t *testing.T, cfg sim.Config) int {
	t.Helper()
	var runs int
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		ctx := context.Background()
		zc, err := w.Server().Connect()
		if err != nil {
			t.Fatal(err)
		}
		defer zc.Close()
		if _, err := zc.Create(ctx, "/d", nil, zksim.ModePersistent, open); err != nil {
			t.Fatal(err)
		}
		var done [2]box[bool]
		for i := range 2 {
			c := w.Conn(i)
			w.Go(func(ctx context.Context) {
				for range 5 {
					if _, err := c.Create(ctx, "/d/n-", []byte(c.Name()), zksim.ModePersistentSequential, open); err != nil {
						t.Errorf("create: %v", err)
					}
				}
				done[i].put(true)
			})
		}
		run(t, w, func() bool { return done[0].ok() && done[1].ok() })
		names, _, err := zc.Children(ctx, "/d")
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(names)
		last := ""
		for _, n := range names {
			data, _, err := zc.Get(ctx, "/d/"+n)
			if err != nil {
				t.Fatal(err)
			}
			if string(data) != last {
				runs++
				last = string(data)
			}
		}
	})
	return runs
}

// With PCT of depth 1 a client runs alone until it blocks; uniform choices
// interleave the two clients.
func TestPCTDepthOneRunsByPriority(t *testing.T) {
	interleaved := false
	for seed := range uint64(10) {
		if n := pctRuns(t, sim.Config{Seed: seed, Clients: 2, PCT: sim.PCT{Depth: 1}}); n != 2 {
			t.Errorf("seed %d, PCT depth 1: %d runs of creates, want 2", seed, n)
		}
		interleaved = interleaved || pctRuns(t, sim.Config{Seed: seed, Clients: 2}) > 2
	}
	if !interleaved {
		t.Errorf("uniform choices never interleaved the clients over 10 seeds")
	}
}

// A change point switches from the running client exactly once: at most
// three runs, and three for some seed.
func TestPCTChangePoint(t *testing.T) {
	three := false
	for seed := range uint64(20) {
		n := pctRuns(t, sim.Config{Seed: seed, Clients: 2, PCT: sim.PCT{Depth: 2, Steps: 12}})
		if n > 3 {
			t.Errorf("seed %d, PCT depth 2: %d runs of creates, want at most 3", seed, n)
		}
		three = three || n == 3
	}
	if !three {
		t.Errorf("no change point split a client's creates over 20 seeds")
	}
}

// With NearWrap a directory's sequential children cross the int32 wrap
// within its first 16 creates, at an offset that depends on the seed.
func TestNearWrap(t *testing.T) {
	starts := map[string]bool{}
	for seed := range uint64(8) {
		sim.Test(t, sim.Config{Seed: seed, Clients: 1, NearWrap: true}, func(t *testing.T, w *sim.World) {
			c := w.Conn(0)
			var names box[[]string]
			w.Go(func(ctx context.Context) {
				if _, err := c.Create(ctx, "/d", nil, zksim.ModePersistent, open); err != nil {
					t.Errorf("create: %v", err)
				}
				var out []string
				for range 17 {
					p, err := c.Create(ctx, "/d/n-", nil, zksim.ModePersistentSequential, open)
					if err != nil {
						t.Errorf("create: %v", err)
					}
					out = append(out, p)
				}
				names.put(out)
			})
			run(t, w, names.ok)
			got := names.get()
			starts[got[0]] = true
			if !slices.Contains(got, "/d/n-2147483647") || !slices.Contains(got, "/d/n--2147483648") {
				t.Errorf("seed %d: names %v do not cross the wrap", seed, got)
			}
		})
	}
	if len(starts) < 2 {
		t.Errorf("every seed started at %v", starts)
	}
}
