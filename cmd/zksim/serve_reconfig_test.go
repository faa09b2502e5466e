package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	zk "github.com/zksim/zksim"
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

// TestServeServersReconfigEnabled: zksim serve -servers 3 -reconfigEnabled
// checks reconfig as a 3.8 leader does, through every member: removing a
// member is refused with NoAuth to an anonymous client, which the world
// may only read /zookeeper/config; the super user passes every check and
// hears Unimplemented (the change is not modelled); a configuration that
// leaves one voter is BadArguments for both.
func TestServeServersReconfigEnabled(t *testing.T) {
	addrs, _ := serveEnsembleInProcess(t, 3, "-control", "127.0.0.1:0", "-reconfigEnabled",
		"-superDigest", zk.DigestID("super", "pw"))
	leave := func(ids string) *jute.ReconfigRequest {
		return &jute.ReconfigRequest{LeavingServers: &ids, CurConfigID: -1}
	}
	for _, addr := range addrs {
		for _, super := range []bool{false, true} {
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(10 * time.Second))
			br := bufio.NewReader(nc)
			call := func(xid, op int32, rec jute.Record) jute.ReplyHeader {
				t.Helper()
				nc.Write(jute.AppendFrame(nil, &jute.RequestHeader{Xid: xid, Type: op}, rec))
				b, err := jute.ReadFrame(br, 1<<20, nil)
				if err != nil {
					t.Fatalf("%s: reply to %d: %v", addr, xid, err)
				}
				var h jute.ReplyHeader
				h.Decode(jute.NewDecoder(b))
				return h
			}
			nc.Write(jute.AppendFrame(nil, &jute.ConnectRequest{TimeOut: 4000, Passwd: make([]byte, 16)}))
			if _, err := jute.ReadFrame(br, 1<<20, nil); err != nil {
				t.Fatalf("handshake: %v", err)
			}
			want := int32(-102) // NoAuth
			if super {
				if h := call(jute.XidAuth, jute.OpAuth, &jute.AuthPacket{Scheme: "digest", Auth: []byte("super:pw")}); h.Err != 0 {
					t.Fatalf("addAuth super: %+v", h)
				}
				want = jute.ErrUnimplemented
			}
			if h := call(1, jute.OpReconfig, leave("1")); h.Xid != 1 || h.Err != want {
				t.Fatalf("%s (super %v): remove server 1: %+v, want error %d", addr, super, h, want)
			}
			if h := call(2, jute.OpReconfig, leave("1,2")); h.Err != jute.ErrBadArguments {
				t.Fatalf("%s (super %v): remove servers 1 and 2: %+v, want BadArguments", addr, super, h)
			}
		}
	}
}
