package zkserver

import (
	"context"
	"testing"
	"time"

	"github.com/zksim/zksim/gozk"
)

// connectTimeout bounds the wait for a session in Connect.
const connectTimeout = 30 * time.Second

// Connect opens a gozk session to the server, failing the test if none is
// granted within 30 seconds, and closes it at t.Cleanup.
func (s *Server) Connect(t testing.TB, opts ...gozk.Option) *gozk.Conn {
	t.Helper()
	return connect(t, s.addr, opts)
}

// Connect opens a gozk session through the proxy, failing the test if none
// is granted within 30 seconds, and closes it at t.Cleanup.
func (p *Proxy) Connect(t testing.TB, opts ...gozk.Option) *gozk.Conn {
	t.Helper()
	return connect(t, p.Addr(), opts)
}

func connect(t testing.TB, addr string, opts []gozk.Option) *gozk.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	conn, err := gozk.Connect(ctx, []string{addr}, opts...)
	if err != nil {
		t.Fatalf("zkserver: connect to %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}
