package zkwire_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/conformance"
	"github.com/zksim/zksim/gozk"
	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkserver"
	"github.com/zksim/zksim/zktest"
	"github.com/zksim/zksim/zkwire"
)

// The settings of the real server gozk's conformance run uses (zkserver's),
// given to zkmem here so that the same cases hold.
const (
	wireTick                   = 100 * time.Millisecond
	wireContainerCheckInterval = 100 * time.Millisecond
)

// TestConformanceOverTCP runs the conformance suite through gozk, that is
// go-zookeeper over TCP, against the wire server, with the same skips as
// gozk's run on a real ZooKeeper: every case that passes there passes here.
// Disconnect and Reconnect cut and restore each session's own proxy, as on
// the real server; Expire is the server's, from the control handle.
func TestConformanceOverTCP(t *testing.T) {
	t.Run("ExtendedTypes", func(t *testing.T) {
		srv := zkwire.NewTestServer(t, zkwire.WithZKOptions(zkmem.Options{
			TickTime: wireTick, ExtendedTypes: true, ContainerCheckInterval: wireContainerCheckInterval,
		}))
		conformance.Run(t, wireBackend(t, srv))
	})
	t.Run("NoExtendedTypes", func(t *testing.T) {
		srv := zkwire.NewTestServer(t, zkwire.WithZKOptions(zkmem.Options{
			TickTime: wireTick, ContainerCheckInterval: wireContainerCheckInterval,
		}))
		b := wireBackend(t, srv)
		b.Only = []string{
			"create/ttl-disabled-unimplemented",
			"create/ttl-sequential-disabled-unimplemented",
			"create/ttl-disabled-unimplemented-before-bad-ttl",
			"sequence/counts-every-mode",
		}
		conformance.Run(t, b)
	})
	t.Run("AuthProviders", func(t *testing.T) {
		srv := zkwire.NewTestServer(t, zkwire.WithZKOptions(zkmem.Options{
			TickTime: wireTick, ContainerCheckInterval: wireContainerCheckInterval,
			SuperDigest: zksim.DigestID("super", conformance.SuperPassword),
			SASLUsers:   map[string]string{"bob": "bobpw"},
		}))
		b := wireBackend(t, srv)
		for _, name := range conformance.CaseNames() {
			if strings.HasPrefix(name, "auth/") {
				b.Only = append(b.Only, name)
			}
		}
		conformance.Run(t, b)
	})
}

func wireBackend(t *testing.T, srv *zkwire.TestServer) conformance.Backend {
	pt := &wireProxies{srv: srv, byConn: make(map[zksim.Conn]*zkserver.Proxy)}
	t.Cleanup(pt.closeAll)
	return conformance.Backend{
		Backend: zktest.Backend{
			Name:       "gozk+zkwire",
			Connect:    pt.connect,
			Expire:     pt.expire,
			Disconnect: pt.disconnect,
			Reconnect:  pt.reconnect,
			Facts:      srv.ZK().Options(),
			WireAddr:   srv.Addr(),
		},
		Skip: map[string]string{
			"paths/sequential-dot-name-allowed": `go-zookeeper v1.0.4 checks a sequential create of "/r/." ` +
				`as "/r/." rather than "/r/.1" and rejects it before sending (as in gozk's run on a real server)`,
		},
	}
}

// wireProxies gives each Conn its own proxy to the wire server, so that
// the suite can cut and restore one session's connection.
type wireProxies struct {
	srv *zkwire.TestServer

	mu      sync.Mutex
	byConn  map[zksim.Conn]*zkserver.Proxy
	proxies []*zkserver.Proxy
}

func (pt *wireProxies) connect(ctx context.Context, timeout time.Duration) (zksim.Conn, error) {
	p, err := zkserver.ListenProxy(pt.srv.Addr())
	if err != nil {
		return nil, err
	}
	c, err := gozk.Connect(ctx, []string{p.Addr()}, gozk.WithSessionTimeout(timeout))
	if err != nil {
		p.Close()
		return nil, err
	}
	pt.mu.Lock()
	defer pt.mu.Unlock()
	pt.byConn[c] = p
	pt.proxies = append(pt.proxies, p)
	return c, nil
}

func (pt *wireProxies) proxy(c zksim.Conn) (*zkserver.Proxy, error) {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	p, ok := pt.byConn[c]
	if !ok {
		return nil, fmt.Errorf("conn %T %#x was not opened by this backend", c, c.SessionID())
	}
	return p, nil
}

func (pt *wireProxies) closeAll() {
	pt.mu.Lock()
	proxies := pt.proxies
	pt.proxies, pt.byConn = nil, nil
	pt.mu.Unlock()
	for _, p := range proxies {
		p.Close()
	}
}

func (pt *wireProxies) disconnect(ctx context.Context, c zksim.Conn) error {
	p, err := pt.proxy(c)
	if err != nil {
		return err
	}
	p.Cut()
	return waitFor(ctx, func() bool { return c.State() != zksim.StateConnected }, "the Conn to notice the cut")
}

func (pt *wireProxies) reconnect(ctx context.Context, c zksim.Conn) error {
	p, err := pt.proxy(c)
	if err != nil {
		return err
	}
	p.Restore()
	if err := waitFor(ctx, func() bool {
		s := c.State()
		return s == zksim.StateConnected || s == zksim.StateExpired
	}, "the Conn to reconnect"); err != nil {
		return err
	}
	if c.State() == zksim.StateExpired {
		return zksim.ErrSessionExpired
	}
	// go-zookeeper v1.0.4 reports the session before it re-sends its
	// watches, and reads its last zxid for setWatches unsynchronized with
	// the receive loop that updates it: a reply to a request sent at once
	// would race with it (the race detector sees it; the wire server
	// answers fast enough for it to happen). Give setWatches its turn.
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(settleAfterReconnect):
	}
	return nil
}

const settleAfterReconnect = 50 * time.Millisecond

// expire has the server expire the session through its control handle.
func (pt *wireProxies) expire(ctx context.Context, c zksim.Conn) error {
	ctl, err := pt.srv.Control(c.SessionID())
	if err != nil {
		return err
	}
	ctl.Expire()
	return nil
}

func waitFor(ctx context.Context, cond func() bool, what string) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}
