package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/zksim/zksim/zkwire/jute"
)

// TestServeReconfigEnabled: without -reconfigEnabled reconfig answers
// ReconfigDisabled (-123), with it Unimplemented (-6), as a standalone
// ZooKeeper 3.8 answers with reconfigEnabled false or true.
func TestServeReconfigEnabled(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		want  int32
	}{
		{nil, jute.ErrReconfigDisabled},
		{[]string{"-reconfigEnabled"}, jute.ErrUnimplemented},
	} {
		t.Run(strings.Join(append([]string{"serve"}, tc.flags...), " "), func(t *testing.T) {
			addr := serveInProcess(t, append([]string{"-addr", "127.0.0.1:0", "-control", ""}, tc.flags...))
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(10 * time.Second))
			br := bufio.NewReader(nc)
			nc.Write(jute.AppendFrame(nil, &jute.ConnectRequest{TimeOut: 4000, Passwd: make([]byte, 16)}))
			if _, err := jute.ReadFrame(br, 1<<20, nil); err != nil {
				t.Fatalf("handshake: %v", err)
			}
			nc.Write(jute.AppendFrame(nil, &jute.RequestHeader{Xid: 1, Type: jute.OpReconfig}, &jute.ReconfigRequest{CurConfigID: -1}))
			b, err := jute.ReadFrame(br, 1<<20, nil)
			if err != nil {
				t.Fatalf("reconfig reply: %v", err)
			}
			var h jute.ReplyHeader
			h.Decode(jute.NewDecoder(b))
			if h.Xid != 1 || h.Err != tc.want {
				t.Fatalf("reconfig reply %+v, want error %d", h, tc.want)
			}
		})
	}
}

// serveInProcess runs "zksim serve" with args in this process until the
// test ends and returns the address it listens on.
func serveInProcess(t *testing.T, args []string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := serve(ctx, args, pw, io.Discard)
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
	if !lines.Scan() {
		t.Fatalf("serve printed nothing: %v", lines.Err())
	}
	addr, ok := strings.CutPrefix(lines.Text(), "listening on ")
	if !ok {
		t.Fatalf("first line %q is not the address", lines.Text())
	}
	go io.Copy(io.Discard, pr)
	return addr
}
