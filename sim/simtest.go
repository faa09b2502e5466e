package sim

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"testing"
	"testing/cryptotest"
	"testing/synctest"
	"time"
)

// SeedEnv is the environment variable that overrides the seed of every
// World Test makes: a failure's header names the seed, and
//
//	ZKSIM_SEED=42 go test -run 'TestName$' ./pkg
//
// replays that run without editing the test.
const SeedEnv = "ZKSIM_SEED"

// Test runs body in a testing/synctest bubble with a World made from cfg,
// after making crypto/rand deterministic for the test (seeded from the
// seed, with testing/cryptotest.SetGlobalRandom; so t must not be
// parallel). If the environment sets ZKSIM_SEED (SeedEnv), its value
// replaces cfg.Seed. The World is closed (see World.Close) when body
// returns. If the test failed, Test logs the seed, the virtual time at
// which body gave up, and the whole trace, so the run can be replayed.
func Test(t *testing.T, cfg Config, body func(t *testing.T, w *World)) {
	t.Helper()
	if s, ok := os.LookupEnv(SeedEnv); ok {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("sim: %s=%q: not a seed (a decimal number)", SeedEnv, s)
		}
		t.Logf("sim: seed %d from %s (Config.Seed was %d)", seed, SeedEnv, cfg.Seed)
		cfg.Seed = seed
	}
	synctest.Test(t, func(t *testing.T) {
		t.Helper()
		cryptotest.SetGlobalRandom(t, cfg.Seed)
		w, err := New(cfg)
		if err != nil {
			t.Fatalf("sim.New: %v", err)
		}
		defer func() {
			// The time and steps of the failure, before Close lets the
			// clients' timers run out.
			at, steps := w.Now(), w.Steps()
			w.Close()
			if t.Failed() {
				t.Log(w.report(t.Name(), at, steps))
			}
		}()
		body(t, w)
	})
}

// Report describes the run for a failure message: the seed, the number of
// steps, the virtual time, and the whole trace. Rerunning with the same
// seed (and the same client code) replays the run step for step.
func (w *World) Report() string { return w.report("", w.Now(), w.Steps()) }

func (w *World) report(test string, at time.Duration, steps int) string {
	replay := fmt.Sprintf("Config.Seed = %d", w.Seed())
	if test != "" {
		replay = fmt.Sprintf("%s=%d go test -run '^%s$'", SeedEnv, w.Seed(), regexp.QuoteMeta(test))
	}
	return fmt.Sprintf("sim: seed %d, %d steps, t=%s; replay with %s; trace:\n%s",
		w.Seed(), steps, formatTime(at), replay, w.TraceString())
}
