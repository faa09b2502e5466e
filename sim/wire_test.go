package sim_test

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zksim/zksim/sim"
)

func TestZKClientCreatesAndReads(t *testing.T) {
	sim.Test(t, sim.Config{Seed: 1, Server: zkmemOptions()}, func(t *testing.T, w *sim.World) {
		zc, _, err := w.ConnectZK()
		if err != nil {
			t.Fatal(err)
		}
		done := false
		var got []byte
		var gerr error
		go func() {
			if _, err := zc.Create("/a", []byte("hi"), 0, zk.WorldACL(zk.PermAll)); err != nil {
				gerr = err
			} else {
				got, _, gerr = zc.Get("/a")
			}
			done = true
			w.Wake()
		}()
		if err := w.Run(func() bool { return done }); err != nil {
			t.Fatal(err)
		}
		if gerr != nil || string(got) != "hi" {
			t.Fatalf("got %q, %v", got, gerr)
		}
		if err := w.RunFor(30 * time.Second); err != nil {
			t.Fatal(err)
		}
		t.Log(w.TraceString())
	})
}
