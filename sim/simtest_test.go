package sim_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/sim"
)

// TestFailingSimTest is a failing sim.Test, run only as a subprocess of
// TestSimTestFailureHeader: a client holds an ephemeral node (its session
// pings on), and the body gives up at t=25.5s.
func TestFailingSimTest(t *testing.T) {
	if os.Getenv("ZKSIM_FAILING_SIM_TEST") == "" {
		t.Skip("run by TestSimTestFailureHeader")
	}
	sim.Test(t, sim.Config{Seed: 5, Clients: 1, SessionTimeout: 4 * time.Second, Server: zkmemOptions()}, func(t *testing.T, w *sim.World) {
		w.Go(func(ctx context.Context) {
			_, _ = w.Conn(0).Create(ctx, "/e", nil, zksim.ModeEphemeral, zksim.OpenACL())
		})
		if err := w.RunFor(25500 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
		t.Errorf("the violation, at t=%v (seed %d)", w.Now(), w.Seed())
	})
}

// A failing sim.Test's header gives the virtual time of the failure (not
// the time the World's close let pass), and the seed comes from ZKSIM_SEED
// when it is set, with the command that replays it.
func TestSimTestFailureHeader(t *testing.T) {
	run := func(env ...string) string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFailingSimTest$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), append(env, "ZKSIM_FAILING_SIM_TEST=1")...)
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("the failing test passed:\n%s", out)
		}
		return string(out)
	}
	out := run()
	for _, want := range []string{
		"the violation, at t=25.5s (seed 5)",
		"sim: seed 5, ",
		", t=25.500s; replay with ZKSIM_SEED=5 go test -run '^TestFailingSimTest$'; trace:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out = run(sim.SeedEnv + "=77")
	for _, want := range []string{"sim: seed 77 from ZKSIM_SEED (Config.Seed was 5)", "(seed 77)", "replay with ZKSIM_SEED=77 "} {
		if !strings.Contains(out, want) {
			t.Errorf("with ZKSIM_SEED=77, output lacks %q:\n%s", want, out)
		}
	}
	if out := run(sim.SeedEnv + "=x"); !strings.Contains(out, `sim: ZKSIM_SEED="x": not a seed`) {
		t.Errorf("with ZKSIM_SEED=x:\n%s", out)
	}
}
