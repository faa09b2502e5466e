package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zksim/zksim/zkwire"
)

// serveEnsembleInProcess runs serve with args (and -servers, -addr of the
// caller's) and returns the members' addresses and the control URL, read
// from its first lines.
func serveEnsembleInProcess(t *testing.T, n int, args ...string) (addrs []string, control string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := serve(ctx, append([]string{"-addr", "127.0.0.1:0", "-servers", fmt.Sprint(n)}, args...), pw, io.Discard)
		pw.CloseWithError(err)
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	lines := bufio.NewScanner(pr)
	member := regexp.MustCompile(`^server (\d+) listening on (127\.0\.0\.1:\d+)$`)
	for i := 1; i <= n; i++ {
		if !lines.Scan() {
			t.Fatalf("serve stopped after %d lines: %v", i-1, lines.Err())
		}
		m := member.FindStringSubmatch(lines.Text())
		if m == nil || m[1] != fmt.Sprint(i) {
			t.Fatalf("line %d %q, want server %d listening on ADDR", i, lines.Text(), i)
		}
		addrs = append(addrs, m[2])
	}
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "control on http://127.0.0.1:") {
		t.Fatalf("line %d %q, want the control URL", n+1, lines.Text())
	}
	control = strings.TrimPrefix(lines.Text(), "control on ")
	go io.Copy(io.Discard, pr)
	return addrs, control
}

// TestServeServers: zksim serve -servers 3 prints one line per member,
// then the control URL; a client given the three addresses gets a
// session; GET /servers reports the members by myid, and a crashed
// leader's clients move on.
func TestServeServers(t *testing.T) {
	addrs, control := serveEnsembleInProcess(t, 3, "-readonlymode.enabled", "-tickTime", "100ms")
	get := func() []zkwire.MemberStatus {
		t.Helper()
		resp, err := http.Get(control + "/servers")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var ms []zkwire.MemberStatus
		if err := json.NewDecoder(resp.Body).Decode(&ms); err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET /servers: %d %v", resp.StatusCode, err)
		}
		return ms
	}
	c, events, err := zk.Connect([]string{addrs[2]}, 2*time.Second, zk.WithLogger(discard{}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for ev := range events {
		if ev.State == zk.StateHasSession {
			break
		}
	}
	ms := get()
	if len(ms) != 3 || ms[2].ID != 3 || ms[2].Role != "leader" || len(ms[2].Sessions) != 1 || ms[2].Sessions[0] != c.SessionID() {
		t.Fatalf("GET /servers: %+v", ms)
	}
	resp, err := http.Post(control+"/servers/3/crash", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ms := get(); ms[1].Role != "leader" || ms[2].Role != "down" {
		t.Fatalf("after POST /servers/3/crash: %+v", ms)
	}
}

type discard struct{}

func (discard) Printf(string, ...any) {}
