package main

import (
	"bufio"
	"context"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestServe runs "zksim serve" as a process: its first line is the address
// it listens on, its second the control URL; a go-zookeeper client works
// against it; an interrupt stops it cleanly.
func TestServe(t *testing.T) {
	cmd, addr, control := startServe(t, "-tickTime", "100ms")
	if !strings.HasPrefix(control, "http://127.0.0.1:") {
		t.Fatalf("the control URL is not on loopback: %q", control)
	}

	c, events, err := zk.Connect([]string{addr}, time.Second, zk.WithLogger(log.New(io.Discard, "", 0)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	deadline := time.After(10 * time.Second)
	for st := zk.StateUnknown; st != zk.StateHasSession; {
		select {
		case ev := <-events:
			st = ev.State
		case <-deadline:
			t.Fatal("no session")
		}
	}
	if p, err := c.Create("/served", []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil || p != "/served" {
		t.Fatalf("Create = %q, %v", p, err)
	}
	resp, err := http.Get(control + "/sessions")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "72057594037927936") {
		t.Fatalf("GET /sessions = %s", body)
	}
	c.Close()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("zksim serve after an interrupt: %v", err)
	}
}

// startServe runs "zksim serve -addr 127.0.0.1:0 -control 127.0.0.1:0"
// with more args as a process and reads the address and the control URL it
// prints; t.Cleanup kills it if it still runs.
func startServe(t *testing.T, args ...string) (cmd *exec.Cmd, addr, control string) {
	t.Helper()
	cmd = exec.Command(os.Args[0], append([]string{"serve", "-addr", "127.0.0.1:0", "-control", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), "ZKSIM_TEST_MAIN=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewScanner(out)
	line := func() string {
		if !lines.Scan() {
			t.Fatalf("zksim serve printed nothing: %v", lines.Err())
		}
		return lines.Text()
	}
	addr, ok := strings.CutPrefix(line(), "listening on ")
	if !ok {
		t.Fatalf("first line is not the address")
	}
	control, ok = strings.CutPrefix(line(), "control on ")
	if !ok {
		t.Fatalf("second line is not the control URL: %q", control)
	}
	go io.Copy(io.Discard, out)
	return cmd, addr, control
}

// TestServeBadFlags: a bad flag is an error, not a server.
func TestServeBadFlags(t *testing.T) {
	var stderr strings.Builder
	err := serve(context.Background(), []string{"-nosuchflag"}, io.Discard, &stderr)
	if err == nil || !strings.Contains(stderr.String(), "nosuchflag") {
		t.Fatalf("serve -nosuchflag = %v, stderr %q", err, stderr.String())
	}
	if err := serve(context.Background(), []string{"-addr", "256.0.0.1:1"}, io.Discard, io.Discard); err == nil {
		t.Fatal("serve on a bad address succeeded")
	}
}
