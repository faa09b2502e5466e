package zkserver

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"
)

// echoServer accepts connections on loopback and echoes what they send.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

func openLink(t *testing.T, target string) *link {
	t.Helper()
	l, err := listenLink(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.close)
	return l
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// readWithin reads len(want) bytes from c within d and reports whether
// they came.
func readWithin(t *testing.T, c net.Conn, want []byte, d time.Duration) bool {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(d))
	got := make([]byte, len(want))
	if _, err := io.ReadFull(c, got); err != nil {
		return false
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %q, want %q", got, want)
	}
	return true
}

func TestLinkHoldsOneDirection(t *testing.T) {
	l := openLink(t, echoServer(t))
	c := dial(t, l.addr())
	if _, err := c.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	if !readWithin(t, c, []byte("a"), 5*time.Second) {
		t.Fatal("no echo through the link")
	}
	l.setHold(false, true) // hold what the target sends back
	if _, err := c.Write([]byte("b")); err != nil {
		t.Fatal(err)
	}
	if readWithin(t, c, []byte("b"), 200*time.Millisecond) {
		t.Fatal("the echo came through a held link")
	}
	l.setHold(false, false)
	if !readWithin(t, c, []byte("b"), 5*time.Second) {
		t.Fatal("the held echo was not delivered on release")
	}
}

func TestLinkCutAndRestore(t *testing.T) {
	l := openLink(t, echoServer(t))
	c := dial(t, l.addr())
	if _, err := c.Write([]byte("a")); err != nil || !readWithin(t, c, []byte("a"), 5*time.Second) {
		t.Fatalf("no echo through the link: %v", err)
	}
	l.setCut(true)
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("a live connection survived the cut")
	}
	held := dial(t, l.addr())
	if _, err := held.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if readWithin(t, held, []byte("x"), 200*time.Millisecond) {
		t.Fatal("a connection made during the cut was answered")
	}
	l.setCut(false)
	_ = held.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := held.Read(make([]byte, 1)); err == nil {
		t.Fatal("a connection held during the cut was not closed on restore")
	}
	c2 := dial(t, l.addr())
	if _, err := c2.Write([]byte("y")); err != nil || !readWithin(t, c2, []byte("y"), 5*time.Second) {
		t.Fatalf("no echo after restore: %v", err)
	}
}

// initialMessage is QuorumCnxManager's first message: protocol version,
// server id, and the announced election address.
func initialMessage(version, sid int64, addr string) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(version))
	b = binary.BigEndian.AppendUint64(b, uint64(sid))
	b = binary.BigEndian.AppendUint32(b, uint32(len(addr)))
	return append(b, addr...)
}

func TestRewriteElectionAddr(t *testing.T) {
	rewrite := rewriteElectionAddr("127.0.0.1:5555")
	for _, version := range []int64{electionProtocolV1, electionProtocolV2} {
		in := append(initialMessage(version, 3, "127.0.0.1:40000"), "rest"...)
		r := bytes.NewReader(in)
		got, err := rewrite(r)
		if err != nil {
			t.Fatal(err)
		}
		if want := initialMessage(version, 3, "127.0.0.1:5555"); !bytes.Equal(got, want) {
			t.Fatalf("version %d: rewrote to %x, want %x", version, got, want)
		}
		if rest, _ := io.ReadAll(r); string(rest) != "rest" {
			t.Fatalf("version %d: the rewrite consumed what follows: %q left", version, rest)
		}
	}
	// The old protocol sends a server id alone: passed on unchanged.
	old := binary.BigEndian.AppendUint64(nil, 2)
	got, err := rewrite(bytes.NewReader(old))
	if err != nil || !bytes.Equal(got, old) {
		t.Fatalf("old protocol: %x, %v", got, err)
	}
}
