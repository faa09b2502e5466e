package zkwire_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zksim/zksim/zkwire"
)

// TestControlAimOverHTTP: lose-next-reply?op=create&path=/app/lock/&count=2
// hits the next two creates under /app/lock over the wire, and not the
// create of /app/lock itself; GET /sessions shows what is left armed, and
// GET /events?wait= tells when each fires.
func TestControlAimOverHTTP(t *testing.T) {
	srv := fastServer(t)
	c, events := dial(t, srv.Addr(), 4*time.Second)
	id := c.SessionID()
	url := fmt.Sprintf("%s/sessions/%d/lose-next-reply?op=create&path=/app/lock/&count=2", srv.ControlURL(), id)
	if status, body := do(t, "POST", url); status != 200 {
		t.Fatalf("POST %s = %d %s", url, status, body)
	}
	armed := func(count int) {
		t.Helper()
		want := []zkwire.ArmedFault{{Fault: "lose-next-reply", Op: "create", Path: "/app/lock/", Count: count}}
		if count == 0 {
			want = []zkwire.ArmedFault{}
		}
		if got := sessionStatus(t, srv, id).Armed; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("armed %+v, want %+v", got, want)
		}
	}
	armed(2)
	_, last := eventsAfter(t, srv, 0, "")
	for _, p := range []string{"/app", "/app/lock"} {
		if _, err := c.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %s, not aimed at: %v", p, err)
		}
	}
	armed(2)
	for i, p := range []string{"/app/lock/a", "/app/lock/b"} {
		if _, err := c.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); !errors.Is(err, zk.ErrConnectionClosed) {
			t.Fatalf("aimed create %s: %v, want its reply lost", p, err)
		}
		var evs []zkwire.Event
		evs, last = eventsAfter(t, srv, last, "lose-next-reply")
		if e := evs[len(evs)-1]; e.Op != "create" || e.Path != p || e.Session != id {
			t.Fatalf("event %+v, want the lost create of %s", e, p)
		}
		armed(1 - i)
		waitState(t, events, zk.StateHasSession)
	}
	if _, err := c.Create("/app/lock/c", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create past the count: %v", err)
	}
	kids, _, err := c.Children("/app/lock")
	slices.Sort(kids)
	if err != nil || !slices.Equal(kids, []string{"a", "b", "c"}) {
		t.Fatalf("children %v, %v: the lost replies' creates were applied", kids, err)
	}
}

// eventsAfter waits (GET /events?since=N&wait=5s) until an event named
// name ("" for any) comes after seq, and returns the events up to it and
// the last one's seq.
func eventsAfter(t *testing.T, srv *zkwire.TestServer, seq int64, name string) ([]zkwire.Event, int64) {
	t.Helper()
	var seen []zkwire.Event
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		status, body := do(t, "GET", fmt.Sprintf("%s/events?since=%d&wait=5s", srv.ControlURL(), seq))
		if status != 200 {
			t.Fatalf("GET /events = %d %s", status, body)
		}
		var evs []zkwire.Event
		if err := json.Unmarshal([]byte(body), &evs); err != nil {
			t.Fatalf("GET /events: %v\n%s", err, body)
		}
		for _, e := range evs {
			seen, seq = append(seen, e), e.Seq
			if name == "" || e.Event == name {
				return seen, seq
			}
		}
	}
	t.Fatalf("no event %q after %d within 10s; saw %+v", name, seq, seen)
	return nil, 0
}

// TestControlAimFromGo: Control.DropRequests aims from Go as the endpoint
// does, and a bad Aim is refused naming its field, nothing armed.
func TestControlAimFromGo(t *testing.T) {
	srv := fastServer(t)
	c, events := dial(t, srv.Addr(), 4*time.Second)
	ctl := control(t, srv, c.SessionID())
	for _, tc := range []struct {
		aim  zkwire.Aim
		says string
	}{
		{zkwire.Aim{Op: "nosuch"}, "op: "},
		{zkwire.Aim{Path: "x"}, `path: "x"`},
		{zkwire.Aim{Count: -1}, "count: -1"},
	} {
		if err := ctl.DropRequests(tc.aim); err == nil || !strings.HasPrefix(err.Error(), tc.says) {
			t.Errorf("DropRequests(%+v) = %v, want an error starting %q", tc.aim, err, tc.says)
		}
	}
	if err := ctl.DropRequests(zkwire.Aim{Op: "setData", Path: "/d"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/d", "/e"} {
		if _, err := c.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Set("/e", []byte("e"), -1); err != nil {
		t.Fatalf("setData on /e, not aimed at: %v", err)
	}
	if _, err := c.Set("/d", []byte("d"), -1); !errors.Is(err, zk.ErrConnectionClosed) {
		t.Fatalf("aimed setData on /d: %v, want the request dropped", err)
	}
	waitState(t, events, zk.StateHasSession)
	if data, _, err := c.Get("/d"); err != nil || len(data) != 0 {
		t.Fatalf("/d = %q, %v: the dropped setData was applied", data, err)
	}
	if got := sessionStatus(t, srv, c.SessionID()).Armed; len(got) != 0 {
		t.Fatalf("armed %+v after the one drop", got)
	}
}
