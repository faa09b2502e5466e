package faults_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/sim"
)

// TestPolicyTraceDump writes, when ZKSIM_TRACE_OUT names a file, the
// SHA-256 of the trace of a run under each of Swarm (with and without
// DeleteUnder's directories) and Mix for seeds 0 to ZKSIM_TRACE_SEEDS-1
// (default 100), one line per run; ZKSIM_TRACE_FULL=1 adds each whole
// trace. The draws of these policies on the World's fault generator are
// part of every seed's trace: compare the files of two versions of package
// faults to see that a change left them alone.
func TestPolicyTraceDump(t *testing.T) {
	out := os.Getenv("ZKSIM_TRACE_OUT")
	if out == "" {
		t.Skip("ZKSIM_TRACE_OUT not set")
	}
	seeds := 100
	if n, err := strconv.Atoi(os.Getenv("ZKSIM_TRACE_SEEDS")); err == nil && n > 0 {
		seeds = n
	}
	full := os.Getenv("ZKSIM_TRACE_FULL") != ""
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	policies := []struct {
		name string
		make func() sim.Policy
	}{
		{"swarm-dirs", func() sim.Policy {
			return faults.Swarm(faults.SwarmOptions{Intensity: 0.2, Dirs: []string{"/app"}})
		}},
		{"swarm", func() sim.Policy { return faults.Swarm(faults.SwarmOptions{}) }},
		{"mix", func() sim.Policy { return faults.Mix(0.05) }},
	}
	for _, p := range policies {
		for seed := range uint64(seeds) {
			trace := churnTrace(t, seed, p.make())
			fmt.Fprintf(f, "%s %d %x\n", p.name, seed, sha256.Sum256([]byte(trace)))
			if full {
				fmt.Fprint(f, trace)
			}
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// churnTrace has two clients create, list and delete nodes under /app for
// a while under policy and returns the trace.
func churnTrace(t *testing.T, seed uint64, policy sim.Policy) (trace string) {
	t.Helper()
	sim.Test(t, sim.Config{Seed: seed, Clients: 2, Policy: policy}, func(t *testing.T, w *sim.World) {
		zc, err := w.Server().Connect()
		if err != nil {
			t.Fatal(err)
		}
		defer zc.Close()
		if _, err := zc.Create(context.Background(), "/app", nil, zksim.ModePersistent, open); err != nil {
			t.Fatal(err)
		}
		var done [2]flag
		for i := range 2 {
			c := w.Conn(i)
			w.Go(func(ctx context.Context) {
				defer done[i].set()
				for range 40 {
					p, err := c.Create(ctx, "/app/n-", nil, zksim.ModeEphemeralSequential, open)
					if err == nil {
						_, _, _ = c.Children(ctx, "/app")
						_ = c.Delete(ctx, p, -1)
					}
					if c.State() == zksim.StateExpired {
						return
					}
				}
			})
		}
		mustRun(t, w, func() bool { return done[0].get() && done[1].get() })
		trace = w.TraceString()
	})
	return trace
}
