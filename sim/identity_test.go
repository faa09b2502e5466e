package sim_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/sim"
)

// A client that added a digest identity keeps its rights across a
// reconnection, because it sends its credentials again, as go-zookeeper
// does: the server itself gives the resumed session only its ip identity.
// Both kinds of simulated client: a native Conn and a go-zookeeper client
// over the wire front end.
func TestReconnectedClientsSendTheirCredentialsAgain(t *testing.T) {
	digestOnly := zksim.DigestACL(zksim.PermAll, "u", "p")
	sim.Test(t, sim.Config{Seed: 3, Clients: 2}, func(t *testing.T, w *sim.World) {
		zc, events, err := w.ConnectZK()
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for range events {
			}
		}()
		c, other := w.Conn(0), w.Conn(1)
		var setUp box[error]
		w.Go(func(ctx context.Context) {
			err := c.AddAuth(ctx, "digest", []byte("u:p"))
			if err == nil {
				_, err = c.Create(ctx, "/native", nil, zksim.ModePersistent, digestOnly)
			}
			if err == nil {
				err = zc.AddAuth("digest", []byte("u:p"))
			}
			if err == nil {
				_, err = zc.Create("/zk", nil, 0, zk.DigestACL(zk.PermAll, "u", "p"))
			}
			setUp.put(err)
		})
		run(t, w, setUp.ok)
		if err := setUp.get(); err != nil {
			t.Fatalf("set up: %v", err)
		}
		for _, i := range []int{0, 2} {
			if err := w.Faults().Disconnect(i, 100*time.Millisecond); err != nil {
				t.Fatal(err)
			}
		}
		// go-zookeeper dials again a second later.
		if err := w.RunFor(2 * time.Second); err != nil {
			t.Fatal(err)
		}
		var reads box[[]error]
		w.Go(func(ctx context.Context) {
			_, _, err1 := c.Get(ctx, "/native")
			_, _, err2 := zc.Get("/zk")
			_, _, err3 := other.Get(ctx, "/native")
			reads.put([]error{err1, err2, err3})
		})
		run(t, w, reads.ok)
		got := reads.get()
		if got[0] != nil || got[1] != nil || !errors.Is(got[2], zksim.ErrNoAuth) {
			t.Errorf("after reconnecting: native %v, go-zookeeper %v, a client without the identity %v (want nil, nil, NoAuth)", got[0], got[1], got[2])
		}
		tr := w.TraceString()
		for _, want := range []string{"c0 reconnect -> StateConnected", "c2 apply connect #2 session 0x100000000000002 -> session 0x100000000000002", "c2 apply addAuth"} {
			if !strings.Contains(tr, want) {
				t.Errorf("no %q in the trace:\n%s", want, tr)
			}
		}
	})
}
