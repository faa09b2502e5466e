package faults_test

import (
	"context"
	"strings"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/sim"
)

// swarmRun runs churnTrace's workload under a Swarm policy and returns the
// policy's description (the trace's first line) and the trace.
func swarmRun(t *testing.T, seed uint64) (desc, trace string) {
	t.Helper()
	trace = churnTrace(t, seed, faults.Swarm(faults.SwarmOptions{Intensity: 0.2, Dirs: []string{"/app"}}))
	desc, _, _ = strings.Cut(trace, "\n")
	return desc, trace
}

// Each seed enables its own subset of fault kinds, and only those strike.
func TestSwarmDrawsSubsets(t *testing.T) {
	kinds := []string{"Disconnect", "Expire", "Pause", "Delay", "SlowServer", "DeleteUnder", "LoseReply", "DropRequest", "ShuffleChildren"}
	marks := map[string]string{"LoseReply": "[LoseReply]", "DropRequest": "[DropRequest]", "ShuffleChildren": "[shuffled]", "DeleteUnder": "fault DeleteNode(", "SlowServer": "fault SlowServer("}
	descs := map[string]bool{}
	for seed := range uint64(12) {
		desc, trace := swarmRun(t, seed)
		if !strings.Contains(desc, "(Swarm 0.2: ") {
			t.Fatalf("seed %d: first trace line %q does not print the swarm", seed, desc)
		}
		descs[desc] = true
		for _, k := range kinds {
			mark, ok := marks[k]
			if !ok {
				mark = "fault " + k + "("
			}
			if !strings.Contains(desc, " "+k+"×") && strings.Contains(trace, mark) {
				t.Errorf("seed %d: %s struck though the swarm %s left it out", seed, k, desc)
			}
		}
	}
	if len(descs) < 6 {
		t.Errorf("12 seeds drew only %d swarms: %v", len(descs), descs)
	}
}

// A third party's delete strikes a leaf below the directory and fires the
// clients' watches.
func TestDeleteUnder(t *testing.T) {
	sim.Test(t, sim.Config{Seed: 3, Clients: 1}, func(t *testing.T, w *sim.World) {
		c := w.Conn(0)
		var fired flag
		var created flag
		w.Go(func(ctx context.Context) {
			_, _ = c.Create(ctx, "/app", nil, zksim.ModePersistent, open)
			_, _ = c.Create(ctx, "/app/a", nil, zksim.ModePersistent, open)
			_, _ = c.Create(ctx, "/app/a/leaf", nil, zksim.ModeEphemeral, open)
			_, _, ch, err := c.ExistsW(ctx, "/app/a/leaf")
			created.set()
			if err != nil {
				t.Errorf("exists: %v", err)
				return
			}
			if ev := <-ch; ev.Type == zksim.EventNodeDeleted {
				fired.set()
			}
		})
		mustRun(t, w, created.get)
		if err := w.Inject(faults.DeleteUnder("/app")); err != nil {
			t.Fatalf("inject: %v", err)
		}
		mustRun(t, w, fired.get)
		if !strings.Contains(w.TraceString(), "fault DeleteNode(/app/a/leaf)") {
			t.Errorf("trace does not show the delete:\n%s", w.TraceString())
		}
		if err := w.Inject(faults.DeleteNode("/nope")); err == nil {
			t.Errorf("deleting a missing node: no error")
		}
	})
}
