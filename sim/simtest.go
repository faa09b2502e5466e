package sim

import (
	"fmt"
	"testing"
	"testing/cryptotest"
	"testing/synctest"
)

// Test runs body in a testing/synctest bubble with a World made from cfg,
// after making crypto/rand deterministic for the test (seeded from
// cfg.Seed, with testing/cryptotest.SetGlobalRandom; so t must not be
// parallel). The World is closed (see World.Close) when body returns. If the test failed,
// Test logs the seed and the whole trace, so the run can be replayed.
func Test(t *testing.T, cfg Config, body func(t *testing.T, w *World)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		t.Helper()
		cryptotest.SetGlobalRandom(t, cfg.Seed)
		w, err := New(cfg)
		if err != nil {
			t.Fatalf("sim.New: %v", err)
		}
		defer func() {
			w.Close()
			if t.Failed() {
				t.Log(w.Report())
			}
		}()
		body(t, w)
	})
}

// Report describes the run for a failure message: the seed, the number of
// steps, the virtual time, and the whole trace. Rerunning with the same
// seed (and the same client code) replays the run step for step.
func (w *World) Report() string {
	return fmt.Sprintf("sim: seed %d, %d steps, t=%s; replay with Config.Seed = %d; trace:\n%s",
		w.Seed(), w.Steps(), formatTime(w.Now()), w.Seed(), w.TraceString())
}
