package zkwire_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zksim/zksim/zkwire"
)

// do sends method url and returns the status and body.
func do(t *testing.T, method, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestControlBadParameters: each bad input is answered with a message that
// names what is wrong: the parameter, the session id, the route.
func TestControlBadParameters(t *testing.T) {
	srv := fastServer(t)
	c, _ := dial(t, srv.Addr(), 5*time.Second)
	base := srv.ControlURL()
	dec := fmt.Sprintf("%s/sessions/%d", base, c.SessionID())
	for _, tc := range []struct {
		method, url string
		status      int
		says        string
	}{
		{"POST", dec + "/delay", 400, "parameter for is required"},
		{"POST", dec + "/delay?for=", 400, `parameter for: "" is not a duration`},
		{"POST", dec + "/delay?for=soon", 400, `parameter for: "soon" is not a duration`},
		{"POST", dec + "/delay?for=-1s", 400, "parameter for: -1s is negative"},
		{"POST", dec + "/delay?fro=1s", 400, "unknown parameter fro"},
		{"POST", dec + "/delay?for=1s&for=2s", 400, "parameter for given 2 times"},
		{"POST", dec + "/lose-next-reply?op=nosuchop", 400, `parameter op: unknown op name "nosuchop"`},
		{"POST", dec + "/drop-next-request?op=Create", 400, `parameter op: unknown op name "Create"`},
		{"POST", dec + "/lose-next-reply?op=create&path=app/lock", 400, `parameter path: "app/lock" is not a path`},
		{"POST", dec + "/lose-next-reply?path=", 400, `parameter path: "" is not a path`},
		{"POST", dec + "/drop-next-request?count=0", 400, `parameter count: "0" is not a count`},
		{"POST", dec + "/drop-next-request?count=two", 400, `parameter count: "two" is not a count`},
		{"POST", dec + "/lose-next-reply?count=1&count=2", 400, "parameter count given 2 times"},
		{"POST", dec + "/expire?op=create", 400, "unknown parameter op"},
		{"POST", dec + "/frobnicate", 404, `unknown action "frobnicate"`},
		{"POST", base + "/sessions/zz/expire", 400, `session id "zz"`},
		{"POST", base + "/sessions/12345/expire", 404, "unknown session: 0x3039"},
		{"GET", base + "/sessions/0x3039", 404, "unknown session: 0x3039"},
		{"GET", base + "/sessions?all=1", 400, "unknown parameter all"},
		{"POST", base + "/restart?down=x", 400, `parameter down: "x" is not a duration`},
		{"POST", base + "/restart?down=-2s", 400, "parameter down: -2s is negative"},
		{"POST", base + "/restart?for=2s", 400, "unknown parameter for"},
		{"POST", base + "/reset?now=1", 400, "unknown parameter now"},
		{"GET", base + "/nosuch", 404, "GET / lists the routes"},
		{"GET", base + "/reset", 404, "no route GET /reset"},
	} {
		status, body := do(t, tc.method, tc.url)
		if status != tc.status || !strings.Contains(body, tc.says) {
			t.Errorf("%s %s = %d %q, want %d saying %q", tc.method, tc.url, status, body, tc.status, tc.says)
		}
	}
	if got := srv.Sessions(); len(got) != 1 || got[0].State != "connected" || len(got[0].Armed) != 0 {
		t.Fatalf("a refused request changed the session: %+v", got)
	}
}

// TestControlRoutesListed: GET / lists every route, as ControlRoutes.
func TestControlRoutesListed(t *testing.T) {
	srv := fastServer(t)
	status, body := do(t, "GET", srv.ControlURL()+"/")
	if status != 200 || body != zkwire.ControlRoutes() {
		t.Fatalf("GET / = %d\n%s\nwant\n%s", status, body, zkwire.ControlRoutes())
	}
	for _, route := range []string{
		"GET  /sessions ", "GET  /sessions/{id} ", "POST /sessions/{id}/expire ",
		"POST /sessions/{id}/disconnect ", "POST /sessions/{id}/lose-next-reply?op=NAME&path=/P&count=N ",
		"POST /sessions/{id}/drop-next-request?op=NAME&path=/P&count=N ", "POST /sessions/{id}/pause ",
		"POST /sessions/{id}/resume ", "POST /sessions/{id}/delay?for=500ms ",
		"POST /reset ", "POST /restart?down=2s ",
	} {
		if !strings.Contains(body, route) {
			t.Errorf("GET / does not list %q", route)
		}
	}
}

// sessionStatus returns what GET /sessions/{id} says of id.
func sessionStatus(t *testing.T, srv *zkwire.TestServer, id int64) zkwire.SessionStatus {
	t.Helper()
	status, body := do(t, "GET", fmt.Sprintf("%s/sessions/0x%x", srv.ControlURL(), id))
	if status != 200 {
		t.Fatalf("GET /sessions/0x%x = %d %s", id, status, body)
	}
	var st zkwire.SessionStatus
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("GET /sessions/0x%x: %v\n%s", id, err, body)
	}
	return st
}

// waitStatus polls until check accepts the session's status.
func waitStatus(t *testing.T, srv *zkwire.TestServer, id int64, what string, check func(zkwire.SessionStatus) bool) zkwire.SessionStatus {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := sessionStatus(t, srv, id)
		if check(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("session 0x%x: not %s within 10s: %+v", id, what, st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func inState(state string) func(zkwire.SessionStatus) bool {
	return func(st zkwire.SessionStatus) bool { return st.State == state }
}

// TestControlSessionsReport: GET /sessions tells each session's id (decimal
// and hex), client address, state, timeout, armed faults, fired faults and
// last op, through a session's life; ended sessions stay listed as expired
// or closed.
func TestControlSessionsReport(t *testing.T) {
	srv := fastServer(t)
	c, events := dial(t, srv.Addr(), 4*time.Second)
	id := c.SessionID()
	st := sessionStatus(t, srv, id)
	if st.ID != id || st.Hex != fmt.Sprintf("0x%x", id) || st.State != "connected" || st.TimeoutMs != 4000 ||
		len(st.Armed) != 0 || len(st.Fired) != 0 {
		t.Fatalf("fresh session: %+v", st)
	}
	if host, _, err := net.SplitHostPort(st.Client); err != nil || host != "127.0.0.1" {
		t.Fatalf("client %q, want 127.0.0.1:PORT", st.Client)
	}
	if _, err := c.Create("/r", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if st = sessionStatus(t, srv, id); st.LastOp != "create" {
		t.Fatalf("last op %q after a create", st.LastOp)
	}
	ctl := control(t, srv, id)
	if err := ctl.LoseNextReply("setData"); err != nil {
		t.Fatal(err)
	}
	if err := ctl.DropNextRequest(""); err != nil {
		t.Fatal(err)
	}
	st = sessionStatus(t, srv, id)
	want := []zkwire.ArmedFault{{Fault: "lose-next-reply", Op: "setData", Count: 1}, {Fault: "drop-next-request", Count: 1}}
	if fmt.Sprint(st.Armed) != fmt.Sprint(want) {
		t.Fatalf("armed %+v, want %+v", st.Armed, want)
	}
	if _, err := c.Set("/r", []byte("x"), -1); err == nil {
		t.Fatal("setData succeeded with its reply lost")
	}
	waitState(t, events, zk.StateHasSession)
	st = sessionStatus(t, srv, id)
	if len(st.Fired) != 1 || st.Fired[0].Fault != "lose-next-reply" || st.Fired[0].Op != "setData" || st.Fired[0].Path != "/r" {
		t.Fatalf("fired %+v, want the lost setData reply on /r", st.Fired)
	}
	if len(st.Armed) != 1 || st.Armed[0].Fault != "drop-next-request" {
		t.Fatalf("armed after the lost reply fired: %+v", st.Armed)
	}
	if _, _, err := c.Get("/r"); err == nil {
		t.Fatal("getData succeeded though dropped")
	}
	waitState(t, events, zk.StateHasSession)
	st = sessionStatus(t, srv, id)
	if len(st.Fired) != 2 || st.Fired[1].Fault != "drop-next-request" || st.Fired[1].Op != "getData" || len(st.Armed) != 0 {
		t.Fatalf("after the dropped getData: fired %+v, armed %+v", st.Fired, st.Armed)
	}
	before := time.Now()
	ctl.Delay(time.Hour)
	st = sessionStatus(t, srv, id)
	if len(st.Armed) != 1 || st.Armed[0].Fault != "delay" || st.Armed[0].Until == nil || st.Armed[0].Until.Before(before.Add(time.Hour)) {
		t.Fatalf("armed under a delay: %+v", st.Armed)
	}
	ctl.Delay(0) // does not shorten it: disconnect drops what it holds
	ctl.Pause()
	if st = sessionStatus(t, srv, id); st.State != "paused" {
		t.Fatalf("state %q, want paused", st.State)
	}
	ctl.Resume()
	ctl.Disconnect()
	waitState(t, events, zk.StateDisconnected)
	waitState(t, events, zk.StateHasSession)
	ctl.Expire()
	waitState(t, events, zk.StateExpired)
	st = waitStatus(t, srv, id, "expired", inState("expired"))
	var faults []string
	for _, f := range st.Fired {
		faults = append(faults, f.Fault)
	}
	if got := strings.Join(faults, " "); got != "lose-next-reply drop-next-request delay delay pause resume disconnect expire" {
		t.Fatalf("fired %s", got)
	}
	if st.TimeoutMs != 4000 || st.Client == "" {
		t.Fatalf("an expired session's record: %+v", st)
	}

	// A disconnected session (no client), then a closed one.
	d, _ := dial(t, srv.Addr(), 10*time.Second)
	did := d.SessionID()
	control(t, srv, did).Pause() // the client will not reconnect while paused...
	d2, _ := dial(t, srv.Addr(), 10*time.Second)
	d2.Close()
	waitStatus(t, srv, d2.SessionID(), "closed", inState("closed"))
	if st := sessionStatus(t, srv, did); st.State != "paused" {
		t.Fatalf("paused session: %+v", st)
	}
	srv.Restart(0) // ...and a restart ends the pause, dropping the connection
	waitStatus(t, srv, did, "connected again", func(st zkwire.SessionStatus) bool { return st.State == "connected" })
	// Every session, by id (go-zookeeper opened a new one for c after its
	// expiry, at a time of its own).
	all := srv.Sessions()
	states := map[int64]string{}
	for i, st := range all {
		states[st.ID] = st.State
		if i > 0 && all[i-1].ID >= st.ID {
			t.Fatalf("GET /sessions not by id: %+v", all)
		}
	}
	if states[id] != "expired" || states[did] != "connected" || states[d2.SessionID()] != "closed" {
		t.Fatalf("GET /sessions: %+v", all)
	}
}
