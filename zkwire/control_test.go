package zkwire_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zksim/zksim/zkwire"
)

func post(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Post(url, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestControlEndpoint drives the faults over HTTP, as a Python or Java
// test does.
func TestControlEndpoint(t *testing.T) {
	srv := fastServer(t)
	c, events := dial(t, srv.Addr(), 5*time.Second)
	base := srv.ControlURL() + "/sessions"

	resp, err := http.Get(base)
	if err != nil {
		t.Fatal(err)
	}
	var sessions []zkwire.SessionStatus
	if err := json.NewDecoder(resp.Body).Decode(&sessions); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !slices.ContainsFunc(sessions, func(st zkwire.SessionStatus) bool { return st.ID == c.SessionID() }) {
		t.Fatalf("GET /sessions = %v, want it to hold %d", sessions, c.SessionID())
	}
	dec := fmt.Sprintf("%s/%d", base, c.SessionID())
	hex := fmt.Sprintf("%s/0x%x", base, c.SessionID())

	for _, tc := range []struct {
		url  string
		want int
	}{
		{base + "/12345/expire", http.StatusNotFound},
		{base + "/zz/expire", http.StatusBadRequest},
		{dec + "/lose-next-reply?op=nosuchop", http.StatusBadRequest},
		{dec + "/delay?for=soon", http.StatusBadRequest},
		{dec + "/delay", http.StatusBadRequest},
		{dec + "/frobnicate", http.StatusNotFound},
	} {
		if got := post(t, tc.url); got != tc.want {
			t.Errorf("POST %s = %d, want %d", tc.url, got, tc.want)
		}
	}

	// lose-next-reply over HTTP, with a hex id.
	if got := post(t, hex+"/lose-next-reply?op=create"); got != http.StatusOK {
		t.Fatalf("lose-next-reply = %d", got)
	}
	if _, err := c.Create("/h", nil, 0, zk.WorldACL(zk.PermAll)); err == nil {
		t.Fatal("Create succeeded with its reply lost")
	}
	waitState(t, events, zk.StateHasSession)
	if ok, _, _ := c.Exists("/h"); !ok {
		t.Fatal("lost-reply create not applied")
	}
	// drop-next-request with no op: the next request of any kind.
	if got := post(t, dec+"/drop-next-request"); got != http.StatusOK {
		t.Fatalf("drop-next-request = %d", got)
	}
	if err := c.Delete("/h", -1); err == nil {
		t.Fatal("Delete succeeded though dropped")
	}
	waitState(t, events, zk.StateHasSession)
	if ok, _, _ := c.Exists("/h"); !ok {
		t.Fatal("dropped delete applied")
	}
	// The delay runs from when the server took the POST, after start, so
	// the reply comes at least 100 ms after start however long the POST's
	// answer took to come back.
	start := time.Now()
	if got := post(t, dec+"/delay?for=100ms"); got != http.StatusOK {
		t.Fatalf("delay = %d", got)
	}
	c.Exists("/h")
	if time.Since(start) < 100*time.Millisecond {
		t.Fatal("delay not applied")
	}
	post(t, dec+"/delay?for=0s")
	if got := post(t, dec+"/pause"); got != http.StatusOK {
		t.Fatalf("pause = %d", got)
	}
	if got := post(t, dec+"/resume"); got != http.StatusOK {
		t.Fatalf("resume = %d", got)
	}
	if got := post(t, dec+"/disconnect"); got != http.StatusOK {
		t.Fatalf("disconnect = %d", got)
	}
	waitState(t, events, zk.StateDisconnected)
	waitState(t, events, zk.StateHasSession)
	if got := post(t, dec+"/expire"); got != http.StatusOK {
		t.Fatalf("expire = %d", got)
	}
	waitState(t, events, zk.StateExpired)
	// The expired id is unknown from now on.
	if got := post(t, dec+"/expire"); got != http.StatusNotFound {
		t.Fatalf("expire of an expired session = %d, want 404", got)
	}
}
