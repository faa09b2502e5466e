package gozk_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/gozk"
	"github.com/zksim/zksim/zkserver"
)

// The tests share one real server (a start costs seconds); each works under
// its own root.
func TestMain(m *testing.M) {
	code := m.Run()
	zkserver.StopShared()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// waitLimit bounds every wait for an event, so a broken test fails instead
// of hanging. It is not a speed assertion.
const waitLimit = 20 * time.Second

// setup connects to the shared server and creates a fresh root for the test.
func setup(t *testing.T, opts ...gozk.Option) (*zkserver.Server, *gozk.Conn, string) {
	t.Helper()
	srv := zkserver.Shared(t)
	c := srv.Connect(t, opts...)
	root := srv.Root(t)
	if _, err := c.Create(context.Background(), root, nil, zksim.ModePersistent, zksim.OpenACL()); err != nil {
		t.Fatalf("create root %s: %v", root, err)
	}
	return srv, c, root
}

// recv returns the next event on ch, failing the test if ch is closed or
// nothing comes within waitLimit.
func recv(t *testing.T, ch <-chan zksim.Event) zksim.Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("channel closed, want an event")
		}
		return ev
	case <-time.After(waitLimit):
		t.Fatalf("no event within %v", waitLimit)
	}
	return zksim.Event{}
}

// recvClosed fails the test unless ch is closed with nothing more on it.
func recvClosed(t *testing.T, ch <-chan zksim.Event) {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if ok {
			t.Fatalf("got %v, want the channel closed", ev)
		}
	case <-time.After(waitLimit):
		t.Fatalf("channel not closed within %v", waitLimit)
	}
}

// waitState reads session events until one has state want.
func waitState(t *testing.T, events <-chan zksim.Event, want zksim.State) []zksim.State {
	t.Helper()
	var seen []zksim.State
	for {
		ev := recv(t, events)
		if ev.Type != zksim.EventSession {
			t.Fatalf("session event of type %v", ev.Type)
		}
		seen = append(seen, ev.State)
		if ev.State == want {
			return seen
		}
	}
}

func wantErr(t *testing.T, what string, got, want error) {
	t.Helper()
	if !errors.Is(got, want) {
		t.Fatalf("%s: got error %v, want %v", what, got, want)
	}
}

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
