package zkwire_test

import (
	"io"
	"log"
	"os"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zksim/zksim/zkwire"
)

var quiet = zk.WithLogger(log.New(logw(), "", log.Lmicroseconds))

// dial connects a go-zookeeper client and waits for its session.
func dial(t *testing.T, addr string, timeout time.Duration) (*zk.Conn, <-chan zk.Event) {
	t.Helper()
	c, events, err := zk.Connect([]string{addr}, timeout, quiet)
	if err != nil {
		t.Fatalf("zk.Connect: %v", err)
	}
	t.Cleanup(c.Close)
	waitState(t, events, zk.StateHasSession)
	return c, events
}

// waitState reads session events until one with state st.
func waitState(t *testing.T, events <-chan zk.Event, st zk.State) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.Type == zk.EventSession && ev.State == st {
				return
			}
		case <-deadline:
			t.Fatalf("no %v within 10s", st)
		}
	}
}

func waitEvent(t *testing.T, ch <-chan zk.Event) zk.Event {
	t.Helper()
	select {
	case ev := <-ch:
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10s")
	}
	return zk.Event{}
}

func control(t *testing.T, srv *zkwire.TestServer, id int64) *zkwire.Control {
	t.Helper()
	ctl, err := srv.Control(id)
	if err != nil {
		t.Fatal(err)
	}
	return ctl
}

func logw() io.Writer {
	if os.Getenv("ZKLOG") != "" {
		return os.Stderr
	}
	return io.Discard
}
