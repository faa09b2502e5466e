package sim_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/sim"
)

// A paused client's write waits for its lagging member; the member is cut
// off, and the client's Conn moves to another member meanwhile (hidden
// while it is paused). When it resumes and its session is expired at
// once, a call of it fails with ErrSessionExpired only after it heard of
// the expiry (findings25, TestLockMutexEnsemble "acquire result": the
// write's failure, the old member's, used to drop the Conn's new
// connection, so the server had the session attached while the client
// said Disconnected, and the expiry reached the Conn without the client
// being told).
func TestEnsembleExpiryAfterAHiddenMoveIsHeardFirst(t *testing.T) {
	cfg := sim.Config{Seed: 3, Clients: 3, Members: 3, Server: zkmemOptions()}
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		e := w.Ensemble()
		client := -1
		for i := range cfg.Clients {
			if w.Member(i) != e.Leader() {
				client = i
				break
			}
		}
		if client < 0 {
			t.Fatal("every client on the leader")
		}
		m := w.Member(client)
		c := w.Conn(client)
		if err := w.Inject(lagFault(m)); err != nil {
			t.Fatal(err)
		}
		var wrote box[error]
		w.Go(func(ctx context.Context) {
			_, err := c.Create(ctx, "/x", nil, zksim.ModePersistent, open)
			wrote.put(err)
		})
		// The create reaches the leader and waits for the lagging member.
		if err := w.RunFor(10 * time.Millisecond); err != nil && !errors.Is(err, sim.ErrIdle) {
			t.Fatal(err)
		}
		if wrote.ok() {
			t.Fatalf("the create returned (%v) before its member applied it", wrote.get())
		}
		for _, f := range []sim.StepFault{faults.Pause(client, -1), faults.Isolate(m, -1), faults.Resume(client), faults.Expire(client)} {
			if err := w.Inject(f); err != nil {
				t.Fatalf("%v: %v", f, err)
			}
		}
		var got box[[2]any]
		w.Go(func(ctx context.Context) {
			_, _, err := c.Exists(ctx, "/x")
			got.put([2]any{err, c.State()})
		})
		run(t, w, func() bool { return wrote.ok() && got.ok() })
		if err := wrote.get(); !errors.Is(err, zksim.ErrConnectionLoss) {
			t.Errorf("the waiting create: %v, want ErrConnectionLoss", err)
		}
		res := got.get()
		err, st := res[0].(error), res[1].(zksim.State)
		if errors.Is(err, zksim.ErrSessionExpired) && st != zksim.StateExpired {
			t.Errorf("a call returned %v while its Conn says %v: the client had not heard of the expiry", err, st)
		}
	})
}
