package faults_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// A lost reply: the caller gets ErrConnectionLoss, yet the node exists; the
// client hears Disconnected, then Connected after the reconnect delay.
func TestLoseReplyNodeExistsAlthoughCallFailed(t *testing.T) {
	cfg := sim.Config{
		Seed: 1, Clients: 2, ReconnectDelay: 300 * time.Millisecond,
		Policy: faults.LoseReply.If(faults.All(faults.OnOp(zkmem.OpCreate), faults.ForClient(0), faults.Times(1))),
	}
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		c0, c1 := w.Conn(0), w.Conn(1)
		st := watchStates(w, c0)
		var createErr record[error]
		var exists record[bool]
		w.Go(func(ctx context.Context) {
			_, err := c0.Create(ctx, "/x", nil, zksim.ModePersistent, open)
			createErr.add(err)
			ok, _, err := c1.Exists(ctx, "/x")
			if err == nil {
				exists.add(ok)
			}
		})
		mustRun(t, w, func() bool { return exists.len() == 1 && len(states(st)) == 2 })
		if err := createErr.get()[0]; !errors.Is(err, zksim.ErrConnectionLoss) {
			t.Fatalf("create with a lost reply: got %v, want ErrConnectionLoss", err)
		}
		if !exists.get()[0] {
			t.Fatal("/x does not exist: the lost reply's create was not applied")
		}
		got := st.get()
		if got[0].v != zksim.StateDisconnected || got[1].v != zksim.StateConnected {
			t.Fatalf("c0 states %v, want Disconnected then Connected", states(st))
		}
		if d := got[1].at - got[0].at; d != 300*time.Millisecond {
			t.Errorf("reconnected after %v, want the reconnect delay 300ms", d)
		}
		if n := strings.Count(w.TraceString(), "[LoseReply]"); n != 1 {
			t.Errorf("%d lost replies in the trace, want 1 (Times 1)", n)
		}
	})
}

// A dropped request: the caller gets ErrConnectionLoss and nothing happened.
func TestDropRequestNothingApplied(t *testing.T) {
	cfg := sim.Config{
		Seed: 1, Clients: 1,
		Policy: faults.DropRequest.If(faults.All(faults.OnOp(zkmem.OpCreate), faults.Times(1))),
	}
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		c0 := w.Conn(0)
		var errs record[error]
		var exists record[bool]
		w.Go(func(ctx context.Context) {
			_, err := c0.Create(ctx, "/x", nil, zksim.ModePersistent, open)
			errs.add(err)
			for c0.State() != zksim.StateConnected { // wait for the reconnect
				time.Sleep(time.Millisecond)
			}
			ok, _, _ := c0.Exists(ctx, "/x")
			exists.add(ok)
			_, err = c0.Create(ctx, "/x", nil, zksim.ModePersistent, open)
			errs.add(err)
		})
		mustRun(t, w, func() bool { return errs.len() == 2 })
		if err := errs.get()[0]; !errors.Is(err, zksim.ErrConnectionLoss) {
			t.Fatalf("dropped create: got %v, want ErrConnectionLoss", err)
		}
		if exists.get()[0] {
			t.Fatal("/x exists after its create was dropped before reaching the server")
		}
		if err := errs.get()[1]; err != nil {
			t.Fatalf("create again: %v (the dropped one must not have been applied)", err)
		}
	})
}

// ShuffleChildren lists the same children in an order drawn from the seed;
// without it the order is canonical (by sequence number).
func TestShuffleChildren(t *testing.T) {
	list := func(t *testing.T, seed uint64, p sim.Policy) []string {
		var names []string
		sim.Test(t, sim.Config{Seed: seed, Clients: 1, Policy: p}, func(t *testing.T, w *sim.World) {
			c := w.Conn(0)
			var got record[[]string]
			w.Go(func(ctx context.Context) {
				c.Create(ctx, "/d", nil, zksim.ModePersistent, open)
				for range 12 {
					c.Create(ctx, "/d/"+strings.Repeat("z", 1)+"-", nil, zksim.ModePersistentSequential, open)
				}
				n, _, err := c.Children(ctx, "/d")
				if err == nil {
					got.add(n)
				}
			})
			mustRun(t, w, func() bool { return got.len() == 1 })
			names = got.get()[0]
		})
		return names
	}
	canonical := list(t, 1, nil)
	for i, n := range canonical {
		if want := "z-" + pad10(i); n != want {
			t.Fatalf("canonical order: child %d is %s, want %s (%v)", i, n, want, canonical)
		}
	}
	shuffled := 0
	for seed := range uint64(5) {
		got := list(t, seed, faults.ShuffleChildren.If(faults.OnOp(zkmem.OpGetChildren)))
		if strings.Join(sortedCopy(got), ",") != strings.Join(canonical, ",") {
			t.Fatalf("seed %d: shuffled children %v are not the same set as %v", seed, got, canonical)
		}
		if strings.Join(got, ",") != strings.Join(canonical, ",") {
			shuffled++
		}
	}
	if shuffled < 4 {
		t.Errorf("only %d of 5 seeds shuffled 12 children", shuffled)
	}
}

func pad10(i int) string {
	s := "0000000000" + itoa(i)
	return s[len(s)-10:]
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// "At step 1: lose the reply of c1's next create", placed explicitly: c1's
// create fails with ErrConnectionLoss although its node exists, and c0's
// creates are untouched.
func TestScheduledLoseNextReply(t *testing.T) {
	cfg := sim.Config{Seed: 1, Clients: 2, Policy: faults.At(1, faults.LoseNextReply(1, zkmem.OpCreate))}
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		var errs [2]record[error]
		for i := range 2 {
			c := w.Conn(i)
			w.Go(func(ctx context.Context) {
				time.Sleep(time.Second) // after the fault is armed
				for _, p := range []string{"/a", "/b"} {
					_, err := c.Create(ctx, p+itoa(i), nil, zksim.ModePersistent, open)
					errs[i].add(err)
				}
			})
		}
		mustRun(t, w, func() bool { return errs[0].len() == 2 && errs[1].len() == 2 })
		if !strings.Contains(w.TraceString(), "step 1 t=0.000s fault LoseNextReply(c1, create)") {
			t.Fatalf("fault not at step 1:\n%s", w.TraceString())
		}
		if e := errs[0].get(); e[0] != nil || e[1] != nil {
			t.Fatalf("c0's creates failed: %v", e)
		}
		e := errs[1].get()
		if !errors.Is(e[0], zksim.ErrConnectionLoss) || e[1] != nil {
			t.Fatalf("c1's creates: %v, want ErrConnectionLoss then success", e)
		}
		var ok record[bool]
		w.Go(func(ctx context.Context) {
			found, _, _ := w.Conn(0).Exists(ctx, "/a1")
			ok.add(found)
		})
		mustRun(t, w, func() bool { return ok.len() == 1 })
		if !ok.get()[0] {
			t.Fatal("/a1 does not exist although only its reply was lost")
		}
	})
}
