package main

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestServeSignalWithFaultArmed stops "zksim serve" with SIGINT and with
// SIGTERM while the control endpoint holds a client's reply
// (delay?for=1000h, then a create) and another session is paused with a
// request unread: the process exits promptly, status 0.
func TestServeSignalWithFaultArmed(t *testing.T) {
	for _, sig := range []os.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, addr, control := startServe(t, "-tickTime", "100ms", "-maxSessionTimeout", "20s")
			held := connectZK(t, addr)
			paused := connectZK(t, addr)
			watcher := connectZK(t, addr)
			controlPost(t, fmt.Sprintf("%s/sessions/%d/delay?for=1000h", control, held.SessionID()))
			controlPost(t, fmt.Sprintf("%s/sessions/%d/pause", control, paused.SessionID()))
			go held.Create("/held", nil, 0, zk.WorldACL(zk.PermAll))
			go paused.Create("/paused", nil, 0, zk.WorldACL(zk.PermAll))
			// The held create is applied; only its reply waits.
			deadline := time.Now().Add(10 * time.Second)
			for ok := false; !ok; {
				if time.Now().After(deadline) {
					t.Fatal("the held create was not applied within 10s")
				}
				ok, _, _ = watcher.Exists("/held")
				time.Sleep(10 * time.Millisecond)
			}
			exited := make(chan error, 1)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			go func() { exited <- cmd.Wait() }()
			select {
			case err := <-exited:
				var exit *exec.ExitError
				if errors.As(err, &exit) {
					t.Fatalf("zksim serve after %v: exit status %d", sig, exit.ExitCode())
				} else if err != nil {
					t.Fatalf("zksim serve after %v: %v", sig, err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("zksim serve still runs 5s after %v with a held reply", sig)
			}
		})
	}
}

// connectZK connects a go-zookeeper client to addr and waits for its
// session; t.Cleanup closes it.
func connectZK(t *testing.T, addr string) *zk.Conn {
	t.Helper()
	c, events, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogger(log.New(io.Discard, "", 0)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				return c
			}
		case <-deadline:
			t.Fatal("no session within 10s")
		}
	}
}

// controlPost POSTs to the control endpoint and fails unless it answers
// 200.
func controlPost(t *testing.T, url string) {
	t.Helper()
	resp, err := http.Post(url, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s = %d %s", url, resp.StatusCode, body)
	}
}
