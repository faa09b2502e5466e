package zkwire_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkwire"
	"github.com/zksim/zksim/zkwire/jute"
)

// getEvents answers GET /events with query q.
func getEvents(t *testing.T, srv *zkwire.TestServer, q string) []zkwire.Event {
	t.Helper()
	status, body := do(t, "GET", srv.ControlURL()+"/events"+q)
	if status != 200 {
		t.Fatalf("GET /events%s = %d %s", q, status, body)
	}
	var evs []zkwire.Event
	if err := json.Unmarshal([]byte(body), &evs); err != nil || evs == nil {
		t.Fatalf("GET /events%s: %v\n%s", q, err, body)
	}
	return evs
}

// TestControlEvents: a test waits for a fault to fire with GET
// /events?since=N&wait=, instead of sleeping; the log also tells of
// sessions opened and closed, and Options.Logf hears the same.
func TestControlEvents(t *testing.T) {
	var mu sync.Mutex
	var logged []string
	srv := zkwire.NewTestServer(t, zkwire.WithZKOptions(zkmem.Options{TickTime: 50 * time.Millisecond, MaxSessionTimeout: 20 * time.Second}),
		zkwire.WithOptions(zkwire.Options{Logf: func(format string, args ...any) {
			mu.Lock()
			logged = append(logged, fmt.Sprintf(format, args...))
			mu.Unlock()
		}}))
	c, events := dial(t, srv.Addr(), 5*time.Second)
	hex := fmt.Sprintf("0x%x", c.SessionID())
	evs := getEvents(t, srv, "")
	if len(evs) != 1 || evs[0].Seq != 1 || evs[0].Event != "open" || evs[0].Session != c.SessionID() || evs[0].Hex != hex || !strings.HasPrefix(evs[0].Client, "127.0.0.1:") {
		t.Fatalf("events after one handshake: %+v", evs)
	}
	if status, body := do(t, "POST", fmt.Sprintf("%s/sessions/%d/lose-next-reply?op=create", srv.ControlURL(), c.SessionID())); status != 200 {
		t.Fatalf("lose-next-reply = %d %s", status, body)
	}
	last := evs[0].Seq
	got := make(chan []zkwire.Event, 1)
	go func() { // no t.Fatal here: the test reads what came
		var evs []zkwire.Event
		if resp, err := http.Get(fmt.Sprintf("%s/events?since=%d&wait=10s", srv.ControlURL(), last)); err == nil {
			json.NewDecoder(resp.Body).Decode(&evs)
			resp.Body.Close()
		}
		got <- evs
	}()
	time.Sleep(50 * time.Millisecond) // the GET waits...
	if _, err := c.Create("/ev", nil, 0, zk.WorldACL(zk.PermAll)); err == nil {
		t.Fatal("create succeeded with its reply lost")
	}
	evs = <-got // ...until the fault fires
	if len(evs) == 0 || evs[0].Seq != last+1 || evs[0].Event != "lose-next-reply" || evs[0].Op != "create" || evs[0].Path != "/ev" {
		t.Fatalf("events after the armed fault fired: %+v", evs)
	}
	waitState(t, events, zk.StateHasSession)
	last = getEvents(t, srv, "")[len(getEvents(t, srv, ""))-1].Seq
	start := time.Now()
	if evs := getEvents(t, srv, fmt.Sprintf("?since=%d&wait=200ms", last)); len(evs) != 0 {
		t.Fatalf("events after the last one: %+v", evs)
	}
	if waited := time.Since(start); waited < 200*time.Millisecond {
		t.Fatalf("GET /events with nothing new answered after %v, want 200ms", waited)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if evs, err := srv.Events(ctx, last); !errors.Is(err, context.DeadlineExceeded) || evs != nil {
		t.Fatalf("Events with nothing new: %v, %v", evs, err)
	}
	c.Close()
	evs = getEvents(t, srv, fmt.Sprintf("?since=%d&wait=5s", last))
	if len(evs) != 1 || evs[0].Event != "close" || evs[0].Session != c.SessionID() {
		t.Fatalf("events after the client's close: %+v", evs)
	}
	for _, q := range []string{"?since=x", "?since=-1", "?wait=1m", "?wait=soon", "?until=3"} {
		status, body := do(t, "GET", srv.ControlURL()+"/events"+q)
		param := strings.Trim(q[1:strings.Index(q, "=")], "?")
		if status != 400 || !strings.Contains(body, "parameter "+param) {
			t.Errorf("GET /events%s = %d %q, want 400 naming %s", q, status, body, param)
		}
	}
	mu.Lock()
	all := strings.Join(logged, "\n")
	mu.Unlock()
	for _, want := range []string{
		"connection from 127.0.0.1:",
		"session " + hex + " (127.0.0.1:",
		"): open",
		"): lose-next-reply create /ev",
		"): reconnect",
		"): close",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("Logf did not hear %q:\n%s", want, all)
		}
	}
}

// TestControlEventsExpired: a session's expiry is in the event log once,
// after an expire from the control (after its "expire" fault) and after
// its timeout when its client went away without closing it; a closed
// session does not expire.
func TestControlEventsExpired(t *testing.T) {
	srv := fastServer(t)
	c, events := dial(t, srv.Addr(), 5*time.Second)
	control(t, srv, c.SessionID()).Expire()
	waitState(t, events, zk.StateExpired)
	evs := getEvents(t, srv, "")
	var seen []string
	for _, e := range evs {
		if e.Session == evs[0].Session {
			seen = append(seen, e.Event)
		}
	}
	if got := strings.Join(seen, " "); got != "open expire expired" {
		t.Fatalf("events of an expired session: %s", got)
	}

	r := dialRaw(t, srv.Addr())
	resp := r.connect(jute.ConnectRequest{TimeOut: 300})
	last := getEvents(t, srv, "")
	after := last[len(last)-1].Seq
	r.nc.Close() // gone without closeSession: the session expires after 300ms
	c.Close()    // go-zookeeper's new session for c: closed, not expired
	deadline := time.Now().Add(5 * time.Second)
	var expired []zkwire.Event
	for len(expired) == 0 && time.Now().Before(deadline) {
		evs = getEvents(t, srv, fmt.Sprintf("?since=%d&wait=5s", after))
		for _, e := range evs {
			after = e.Seq
			if e.Event == "expired" {
				expired = append(expired, e)
			}
		}
	}
	if len(expired) != 1 || expired[0].Session != resp.SessionID {
		t.Fatalf("expiries after a client went away: %+v", expired)
	}
	time.Sleep(1500 * time.Millisecond) // the sweep of c's closed session
	for _, e := range getEvents(t, srv, fmt.Sprintf("?since=%d", after)) {
		if e.Event == "expired" {
			t.Errorf("an unexpected expiry: %+v", e)
		}
	}
}
