package zkserver_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zksim/zksim/zkserver"
)

// echoServer answers every line with the same line.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

const ioLimit = 10 * time.Second

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(ioLimit))
	return c
}

func echo(c net.Conn, line string) (string, error) {
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return "", err
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", err
	}
	return got[:len(got)-1], nil
}

func TestProxyCutAndRestore(t *testing.T) {
	p := zkserver.NewProxy(t, echoServer(t))
	live := dial(t, p.Addr())
	if got, err := echo(live, "hello"); err != nil || got != "hello" {
		t.Fatalf("echo through the proxy = %q, %v", got, err)
	}

	p.Cut()
	if _, err := live.Read(make([]byte, 1)); !closedByPeer(err) {
		t.Fatalf("read on a cut connection: %v, want it closed", err)
	}
	held := dial(t, p.Addr())
	_ = held.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := echo(held, "anyone?"); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a connection made during the cut answered: %v", err)
	}
	_ = held.SetReadDeadline(time.Now().Add(ioLimit))

	p.Restore()
	if _, err := held.Read(make([]byte, 1)); !closedByPeer(err) {
		t.Fatalf("read on a held connection after Restore: %v, want it closed", err)
	}
	fresh := dial(t, p.Addr())
	if got, err := echo(fresh, "again"); err != nil || got != "again" {
		t.Fatalf("echo after Restore = %q, %v", got, err)
	}
	p.Close()
	if _, err := fresh.Read(make([]byte, 1)); !closedByPeer(err) {
		t.Fatalf("read after Close: %v, want it closed", err)
	}
}

// closedByPeer reports whether a read error means the other end closed the
// connection: EOF, or a reset when it had unread data.
func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
}
