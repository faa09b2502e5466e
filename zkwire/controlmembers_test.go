package zkwire_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/zksim/zksim/zkwire"
)

// members returns what GET /servers says.
func members(t *testing.T, url string) []zkwire.MemberStatus {
	t.Helper()
	status, body := do(t, "GET", url+"/servers")
	if status != 200 {
		t.Fatalf("GET /servers = %d %s", status, body)
	}
	var out []zkwire.MemberStatus
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatalf("GET /servers: %v\n%s", err, body)
	}
	return out
}

func roles(ms []zkwire.MemberStatus) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Role)
	}
	return out
}

// TestControlMembers: GET /servers reports each member by its myid (1 to
// N), with its role, applied zxid, pending commits, lag and sessions; POST
// /servers/{n}/{action} lags, catches up, crashes, restarts, isolates and
// heals member n, a crashed leader replaced at once.
func TestControlMembers(t *testing.T) {
	te := newTestEnsemble(t)
	url := te.ControlURL()
	c, _ := dialMembers(t, te.Addr(0))
	ms := members(t, url)
	if len(ms) != 3 || ms[0].ID != 1 || ms[2].ID != 3 || !slices.Equal(roles(ms), []string{"follower", "follower", "leader"}) {
		t.Fatalf("GET /servers: %+v", ms)
	}
	if !slices.Equal(ms[0].Sessions, []int64{c.SessionID()}) || ms[1].Sessions == nil || len(ms[1].Sessions) != 0 {
		t.Fatalf("sessions: %+v", ms)
	}
	if ms[0].Applied != te.Ensemble().LastZxid() || ms[0].AppliedHex == "" {
		t.Fatalf("applied: %+v, last zxid %#x", ms[0], te.Ensemble().LastZxid())
	}
	post := func(path string) {
		t.Helper()
		if status, body := do(t, "POST", url+path); status != 200 || body != "ok\n" {
			t.Fatalf("POST %s = %d %s", path, status, body)
		}
	}
	post("/servers/1/lag")
	other, _ := dialMembers(t, te.Addr(1)) // its createSession is a commit member 1 misses
	if _, err := other.Sync("/"); err != nil {
		t.Fatal(err)
	}
	ms = members(t, url)
	if behind := ms[1].Applied - ms[0].Applied; !ms[0].Lagging || behind < 1 || int64(ms[0].Pending) != behind {
		t.Fatalf("after lag and a session's creation: %+v", ms)
	}
	post("/servers/1/catch-up")
	if ms = members(t, url); ms[0].Lagging || ms[0].Pending != 0 {
		t.Fatalf("after catch-up: %+v", ms)
	}
	post("/servers/3/crash")
	if got := roles(members(t, url)); !slices.Equal(got, []string{"follower", "leader", "down"}) {
		t.Fatalf("after crashing the leader: %v", got)
	}
	post("/servers/3/restart")
	post("/servers/1/isolate")
	if got := roles(members(t, url)); !slices.Equal(got, []string{"read-only", "leader", "follower"}) {
		t.Fatalf("after isolating member 1: %v", got)
	}
	post("/servers/1/heal")
	if got := roles(members(t, url)); !slices.Equal(got, []string{"follower", "leader", "follower"}) {
		t.Fatalf("after healing member 1: %v", got)
	}
}

// TestControlMembersBadRequests: a member number that is not one is 400,
// one out of range 404, an unknown control 404, a wrong method 404 (no
// such route), a parameter 400; on a standalone server the routes answer
// 404 saying it has no members.
func TestControlMembersBadRequests(t *testing.T) {
	te := newTestEnsemble(t)
	for _, tc := range []struct {
		method, path string
		status       int
		says         string
	}{
		{"POST", "/servers/x/lag", 400, `member "x": not a member number (1 to 3)`},
		{"POST", "/servers/0/lag", 404, "no member 0: the members are 1 to 3"},
		{"POST", "/servers/4/crash", 404, "no member 4: the members are 1 to 3"},
		{"POST", "/servers/1/explode", 404, `unknown member control "explode"`},
		{"GET", "/servers/1/lag", 404, "no route GET /servers/1/lag"},
		{"POST", "/servers", 404, "no route POST /servers"},
		{"POST", "/servers/1/lag?for=1s", 400, "unknown parameter for"},
		{"GET", "/servers?x=1", 400, "unknown parameter x"},
	} {
		status, body := do(t, tc.method, te.ControlURL()+tc.path)
		if status != tc.status || !strings.Contains(body, tc.says) {
			t.Errorf("%s %s = %d %q, want %d saying %q", tc.method, tc.path, status, body, tc.status, tc.says)
		}
	}
	if got := roles(members(t, te.ControlURL())); !slices.Equal(got, []string{"follower", "follower", "leader"}) {
		t.Fatalf("the bad requests changed the members: %v", got)
	}

	srv := fastServer(t)
	for _, tc := range []struct{ method, path string }{{"GET", "/servers"}, {"POST", "/servers/1/crash"}} {
		status, body := do(t, tc.method, srv.ControlURL()+tc.path)
		if status != 404 || !strings.Contains(body, "a standalone server has no members") {
			t.Errorf("standalone %s %s = %d %q", tc.method, tc.path, status, body)
		}
	}
}
