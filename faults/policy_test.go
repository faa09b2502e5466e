package faults_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

func TestFaultsPrintThemselves(t *testing.T) {
	for _, tc := range []struct {
		v    interface{ String() string }
		want string
	}{
		{faults.LoseReply.If(faults.All(faults.OnOp(zkmem.OpCreate), faults.ForClient(2), faults.Times(1))),
			"(LoseReply (All (OnOp create) (ForClient c2) (Times 1)))"},
		{faults.DropRequest.If(faults.Any(faults.OnPath("/lock"), faults.Not(faults.AfterStep(10)))),
			"(DropRequest (Any (OnPath /lock) (Not (AfterStep 10))))"},
		{faults.ShuffleChildren.Always(), "(ShuffleChildren)"},
		{faults.Slow(5 * time.Millisecond).If(faults.AfterTime(time.Second)), "((Slow 5ms) (AfterTime 1s))"},
		{faults.At(12, faults.Pause(3, 15*time.Second)), "(At 12 Pause(c3, 15s))"},
		{faults.AtTime(time.Second, faults.LoseNextReply(2, zkmem.OpCreate)), "(AtTime 1s LoseNextReply(c2, create))"},
		{faults.Sometimes(0.5, faults.Expire(faults.AnyClient), faults.Disconnect(1, -1)),
			"(Sometimes 0.5 Expire(c?) Disconnect(c1))"},
		{faults.Limit(2, faults.Combine(faults.DropRequest.If(faults.Randomly(0.25)))), "(Limit 2 (Combine (DropRequest (Randomly 0.25))))"},
		{faults.Delay(0, 300*time.Millisecond), "Delay(c0, 300ms)"},
		{faults.DropNextRequest(4, zkmem.OpAny), "DropNextRequest(c4, any)"},
		{faults.SlowServer(20*time.Millisecond, time.Second), "SlowServer(+20ms, 1s)"},
		{faults.Reconnect(1), "Reconnect(c1)"},
		{faults.Resume(1), "Resume(c1)"},
	} {
		if got := tc.v.String(); got != tc.want {
			t.Errorf("got %s\nwant %s", got, tc.want)
		}
	}
}

// loop makes every client create sequential nodes forever.
func loop(w *sim.World) {
	for i := range w.NumClients() {
		c := w.Conn(i)
		w.Go(func(ctx context.Context) {
			for ctx.Err() == nil {
				if _, err := c.Create(ctx, "/n-", nil, zksim.ModePersistentSequential, open); err != nil {
					select {
					case <-time.After(10 * time.Millisecond):
					case <-ctx.Done():
					}
				}
			}
		})
	}
}

// At places a fault at an exact step, and the trace shows it there.
func TestAtPlacesFaultAtStep(t *testing.T) {
	cfg := sim.Config{Seed: 2, Clients: 3, Policy: faults.At(12, faults.Expire(1))}
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		loop(w)
		mustRun(t, w, func() bool { return w.Steps() >= 30 })
		if !strings.Contains(w.TraceString(), "\nstep 12 t=0.000s fault Expire(c1)\n") {
			t.Fatalf("no Expire(c1) at step 12:\n%s", w.TraceString())
		}
		if w.Live(1) {
			t.Fatal("c1 still live after Expire(c1)")
		}
	})
}

// Sometimes draws its faults, and their targets, from the seed: the same
// seed strikes the same client at the same step; other seeds differ.
func TestSometimesDrawsFromSeed(t *testing.T) {
	faultLines := func(seed uint64) string {
		var lines []string
		cfg := sim.Config{Seed: seed, Clients: 8, ReconnectDelay: 10 * time.Millisecond,
			Policy: faults.Limit(3, faults.Sometimes(0.05, faults.Disconnect(faults.AnyClient, 0)))}
		sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
			loop(w)
			mustRun(t, w, func() bool { return w.Steps() >= 400 })
			for _, l := range w.Trace() {
				if strings.Contains(l, "fault") {
					lines = append(lines, l)
				}
			}
		})
		if len(lines) != 3 {
			t.Fatalf("seed %d: %d faults, want 3 (Limit 3):\n%s", seed, len(lines), strings.Join(lines, "\n"))
		}
		return strings.Join(lines, "\n")
	}
	distinct := map[string]bool{}
	for seed := range uint64(4) {
		a, b := faultLines(seed), faultLines(seed)
		if a != b {
			t.Fatalf("seed %d drew different faults:\n%s\n--\n%s", seed, a, b)
		}
		if strings.Contains(a, "c?") {
			t.Fatalf("trace shows an unresolved client:\n%s", a)
		}
		distinct[a] = true
	}
	if len(distinct) < 3 {
		t.Errorf("4 seeds drew only %d distinct fault schedules", len(distinct))
	}
}

// Combine merges request fates and Limit caps them: exactly two replies
// are lost although every create asks for it.
func TestCombineAndLimit(t *testing.T) {
	cfg := sim.Config{Seed: 1, Clients: 2, Policy: faults.Combine(
		faults.Limit(2, faults.LoseReply.If(faults.OnOp(zkmem.OpCreate))),
		faults.Slow(time.Millisecond).Always(),
	)}
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		loop(w)
		mustRun(t, w, func() bool { return w.Steps() >= 200 })
		tr := w.TraceString()
		if n := strings.Count(tr, "[LoseReply]"); n != 2 {
			t.Fatalf("%d lost replies, want 2", n)
		}
		if !strings.Contains(tr, "(service 1ms)") {
			t.Fatal("Slow(1ms).Always() did not slow requests")
		}
	})
}

// Mix sizes its pauses by the World's session timeout, as the server
// negotiated it, and the trace prints it so from its first line.
func TestMixTakesSessionTimeoutFromWorld(t *testing.T) {
	for _, tc := range []struct {
		timeout time.Duration
		pauses  string
	}{
		{4 * time.Second, "Pause(c?, 6s) Pause(c?, 1.333333333s)"},
		{10 * time.Second, "Pause(c?, 15s) Pause(c?, 3.333333333s)"},
		{time.Hour, "Pause(c?, 1m0s) Pause(c?, 13.333333333s)"}, // clamped to 20 ticks of 2s
	} {
		cfg := sim.Config{Seed: 1, Clients: 1, SessionTimeout: tc.timeout, Policy: faults.Combine(faults.Mix(0.02))}
		sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
			first := w.Trace()[0]
			if !strings.Contains(first, tc.pauses) {
				t.Errorf("timeout %v: trace starts %q, want %q in it", tc.timeout, first, tc.pauses)
			}
		})
	}
}
