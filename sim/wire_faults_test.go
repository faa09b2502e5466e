package sim_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zksim/zksim"
	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// zkWorld runs body with one go-zookeeper client (c1) beside a native one
// (c0), once both are connected; states records the client's session
// events.
func zkWorld(t *testing.T, body func(t *testing.T, w *sim.World, zc *zk.Conn, states func() []zk.State)) {
	sim.Test(t, sim.Config{Seed: 3, Clients: 1, SessionTimeout: 4 * time.Second, Server: zkmemOptions()}, func(t *testing.T, w *sim.World) {
		zc, events, err := w.ConnectZK()
		if err != nil {
			t.Fatal(err)
		}
		var seen []zk.State
		var mu = make(chan struct{}, 1)
		mu <- struct{}{}
		go func() {
			for ev := range events {
				if ev.Type == zk.EventSession {
					<-mu
					seen = append(seen, ev.State)
					mu <- struct{}{}
				}
			}
		}()
		states := func() []zk.State {
			<-mu
			defer func() { mu <- struct{}{} }()
			return append([]zk.State(nil), seen...)
		}
		if err := w.Run(func() bool { return zc.State() == zk.StateHasSession }); err != nil {
			t.Fatal(err)
		}
		body(t, w, zc, states)
	})
}

// do runs f on a client goroutine and steps the World until it returns.
func do(t *testing.T, w *sim.World, f func()) {
	t.Helper()
	var done atomic.Bool
	go func() { f(); done.Store(true); w.Wake() }()
	if err := w.Run(done.Load); err != nil {
		t.Fatal(err)
	}
}

func TestZKNativeAndGoZKShareAWorld(t *testing.T) {
	zkWorld(t, func(t *testing.T, w *sim.World, zc *zk.Conn, _ func() []zk.State) {
		var err error
		do(t, w, func() {
			_, err = w.Conn(0).Create(context.Background(), "/shared", []byte("native"), zksim.ModePersistent, zksim.OpenACL())
		})
		if err != nil {
			t.Fatal(err)
		}
		var data []byte
		do(t, w, func() { data, _, err = zc.Get("/shared") })
		if err != nil || string(data) != "native" {
			t.Fatalf("go-zookeeper read %q, %v", data, err)
		}
	})
}

func TestZKLostReplyAppliesAndReconnects(t *testing.T) {
	zkWorld(t, func(t *testing.T, w *sim.World, zc *zk.Conn, _ func() []zk.State) {
		w.Faults().LoseNextReply(1, zkmem.OpCreate)
		var err error
		do(t, w, func() { _, err = zc.Create("/x", nil, 0, zk.WorldACL(zk.PermAll)) })
		if err != zk.ErrConnectionClosed {
			t.Fatalf("create with its reply lost: %v, want ErrConnectionClosed", err)
		}
		var ok bool
		// A request sent at once fails with ErrNoServer (go-zookeeper fails
		// what is queued when it starts reconnecting); after its
		// one-second pause it is connected again.
		do(t, w, func() { time.Sleep(2 * time.Second); ok, _, err = zc.Exists("/x") })
		if err != nil || !ok {
			t.Fatalf("exists after reconnecting: %v %v; the create was applied", ok, err)
		}
		if !strings.Contains(w.TraceString(), "c1 apply create /x -> ErrConnectionLoss [LoseReply]") {
			t.Errorf("trace:\n%s", w.TraceString())
		}
	})
}

func TestZKDroppedRequestIsNotApplied(t *testing.T) {
	zkWorld(t, func(t *testing.T, w *sim.World, zc *zk.Conn, _ func() []zk.State) {
		w.Faults().DropNextRequest(1, zkmem.OpAny)
		var err error
		do(t, w, func() { _, err = zc.Create("/y", nil, 0, zk.WorldACL(zk.PermAll)) })
		if err != zk.ErrConnectionClosed {
			t.Fatalf("dropped create: %v", err)
		}
		var ok bool
		do(t, w, func() { time.Sleep(2 * time.Second); ok, _, err = zc.Exists("/y") })
		if err != nil || ok {
			t.Fatalf("exists: %v %v; the create was dropped", ok, err)
		}
	})
}

func TestZKExpiryEndsTheSessionAndGoZKOpensANewOne(t *testing.T) {
	zkWorld(t, func(t *testing.T, w *sim.World, zc *zk.Conn, states func() []zk.State) {
		var err error
		do(t, w, func() { _, err = zc.Create("/eph", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)) })
		if err != nil {
			t.Fatal(err)
		}
		old := zc.SessionID()
		if err := w.Inject(expire(1)); err != nil {
			t.Fatal(err)
		}
		if err := w.Run(func() bool { return zc.State() == zk.StateHasSession && zc.SessionID() != old }); err != nil {
			t.Fatal(err)
		}
		if !containsState(states(), zk.StateExpired) {
			t.Errorf("session events %v: no StateExpired", states())
		}
		var ok bool
		do(t, w, func() { ok, _, err = zc.Exists("/eph") })
		if err != nil || ok {
			t.Fatalf("the expired session's ephemeral: exists=%v %v", ok, err)
		}
	})
}

func TestZKPauseLongerThanTheTimeoutExpires(t *testing.T) {
	zkWorld(t, func(t *testing.T, w *sim.World, zc *zk.Conn, states func() []zk.State) {
		old := zc.SessionID()
		if err := w.Faults().Pause(1, 6*time.Second); err != nil {
			t.Fatal(err)
		}
		if err := w.RunFor(20 * time.Second); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(w.TraceString(), "c1 session expired by the server (silent for 4s)") {
			t.Errorf("no expiry in the trace:\n%s", w.TraceString())
		}
		if zc.SessionID() == old || !containsState(states(), zk.StateExpired) {
			t.Errorf("session %#x (was %#x), events %v", zc.SessionID(), old, states())
		}
	})
}

func TestZKWatchSurvivesADisconnectThroughSetWatches(t *testing.T) {
	zkWorld(t, func(t *testing.T, w *sim.World, zc *zk.Conn, _ func() []zk.State) {
		var ch <-chan zk.Event
		var err error
		do(t, w, func() { _, _, ch, err = zc.ExistsW("/later") })
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Faults().Disconnect(1, 2*time.Second); err != nil {
			t.Fatal(err)
		}
		// Created while the client is away: setWatches on reconnecting
		// (relative to the last zxid it saw) fires the watch.
		do(t, w, func() {
			_, err = w.Conn(0).Create(context.Background(), "/later", nil, zksim.ModePersistent, zksim.OpenACL())
		})
		if err != nil {
			t.Fatal(err)
		}
		var ev zk.Event
		do(t, w, func() { ev = <-ch })
		if ev.Type != zk.EventNodeCreated || ev.Path != "/later" {
			t.Fatalf("watch event %+v", ev)
		}
		if !strings.Contains(w.TraceString(), "c1 apply setWatches") {
			t.Errorf("no setWatches in the trace:\n%s", w.TraceString())
		}
	})
}

type expireFault int

func (f expireFault) String() string            { return "Expire" }
func (f expireFault) Inject(w *sim.World) error { return w.Faults().Expire(int(f)) }

func expire(i int) sim.StepFault { return expireFault(i) }

func containsState(states []zk.State, s zk.State) bool {
	for _, x := range states {
		if x == s {
			return true
		}
	}
	return false
}
