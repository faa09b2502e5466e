package sched

import (
	"testing"
	"testing/synctest"

	"github.com/zksim/zksim/zkmem"
)

func TestGateHoldsStepsUntilReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g Gate
		got := make(chan zkmem.Fault, 2)
		go func() { got <- g.Await(1, "create /b") }()
		go func() { got <- g.Await(0, "exists /a") }()
		synctest.Wait()
		if len(got) != 0 {
			t.Fatal("a step went through before it was released")
		}
		steps := g.Waiting()
		if len(steps) != 2 || steps[0].String() != "c0 exists /a" || steps[1].String() != "c1 create /b" {
			t.Fatalf("waiting %v, want c0 then c1", steps)
		}
		g.Release(steps[1], zkmem.LoseReply)
		synctest.Wait()
		if f := <-got; f != zkmem.LoseReply || len(got) != 0 {
			t.Fatalf("released c1 with LoseReply, got %v (and %d more)", f, len(got))
		}
		g.Open()
		if f := <-got; f != zkmem.NoFault {
			t.Fatalf("Open released c0 with %v, want NoFault", f)
		}
		if f := g.Await(2, "sync /"); f != zkmem.NoFault || len(g.Waiting()) != 0 {
			t.Fatalf("after Open a step waited or got %v", f)
		}
	})
}

func TestGateOrdersByClientThenMaskedLabel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g Gate
		labels := []string{
			"exists /l/_c_ffffffff-ffff-4fff-bfff-ffffffffffff-lock-0000000001",
			"exists /l/_c_00000000-0000-4000-8000-000000000000-lock-0000000000",
		}
		for _, l := range labels {
			go g.Await(0, l)
			synctest.Wait() // arrival order: the "ffff" GUID first
		}
		steps := g.Waiting()
		// Masked, the labels differ only by sequence number: ...0000 first,
		// whatever the GUIDs.
		if steps[0].Label != labels[1] {
			t.Fatalf("first step %q, want the lower sequence number", steps[0].Label)
		}
		g.Open()
	})
}

func TestGateReleaseTwicePanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g Gate
		go g.Await(0, "sync /")
		synctest.Wait()
		s := g.Waiting()[0]
		g.Release(s, zkmem.NoFault)
		defer func() {
			if recover() == nil {
				t.Fatal("a second Release of the same step did not panic")
			}
		}()
		g.Release(s, zkmem.NoFault)
	})
}
