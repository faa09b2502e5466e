package gozk_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/conformance"
	"github.com/zksim/zksim/gozk"
	"github.com/zksim/zksim/zkserver"
)

// The settings zkserver gives every server (see its package doc).
const (
	realTick                   = 100 * time.Millisecond
	realContainerCheckInterval = 100 * time.Millisecond
)

// TestConformance runs the conformance suite on a real ZooKeeper through
// the adapter. Every session goes through its own zkserver.Proxy, which is
// how the suite's Disconnect, Reconnect and Expire controls cut and restore
// its connection: a cut held longer than the session timeout makes the real
// server expire the session. Outside CI without ZooKeeper installed it
// skips (zkserver says how to install it); under CI=true it must run.
func TestConformance(t *testing.T) {
	srv := zkserver.Shared(t)
	proxies := newProxyTable(srv.Addr())
	t.Cleanup(proxies.closeAll)
	conformance.Run(t, conformance.Backend{
		Name:       "gozk+ZooKeeper",
		Connect:    proxies.connect,
		Expire:     proxies.expire,
		Disconnect: proxies.disconnect,
		Reconnect:  proxies.reconnect,
		Facts: conformance.Facts{
			TickTime:               realTick,
			ExtendedTypes:          true,
			ContainerCheckInterval: realContainerCheckInterval,
		},
		Skip: map[string]string{
			"paths/sequential-dot-name-allowed": `go-zookeeper v1.0.4 checks a sequential create of "/r/." ` +
				`as "/r/." rather than "/r/.1" and rejects it before sending; the Java client and the server accept it`,
		},
	})
}

// TestConformanceNoExtendedTypes runs the cases about a server with TTL
// nodes off (ZooKeeper's default) on a second real server started that way.
func TestConformanceNoExtendedTypes(t *testing.T) {
	srv := zkserver.Start(t, zkserver.WithSystemProperty("zookeeper.extendedTypesEnabled", "false"))
	conformance.Run(t, conformance.Backend{
		Name: "gozk+ZooKeeper(extendedTypesEnabled=false)",
		Connect: func(ctx context.Context, timeout time.Duration) (zksim.Conn, error) {
			return gozk.Connect(ctx, []string{srv.Addr()}, gozk.WithSessionTimeout(timeout))
		},
		Facts: conformance.Facts{TickTime: realTick, ContainerCheckInterval: realContainerCheckInterval},
		Only: []string{
			"create/ttl-disabled-unimplemented",
			"create/ttl-sequential-disabled-unimplemented",
			"create/ttl-disabled-unimplemented-before-bad-ttl",
			"sequence/counts-every-mode",
		},
	})
}

// proxyTable gives each Conn its own proxy to the server.
type proxyTable struct {
	target string

	mu      sync.Mutex
	byConn  map[zksim.Conn]*zkserver.Proxy
	proxies []*zkserver.Proxy
}

func newProxyTable(target string) *proxyTable {
	return &proxyTable{target: target, byConn: make(map[zksim.Conn]*zkserver.Proxy)}
}

func (pt *proxyTable) connect(ctx context.Context, timeout time.Duration) (zksim.Conn, error) {
	p, err := zkserver.ListenProxy(pt.target)
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

func (pt *proxyTable) proxy(c zksim.Conn) (*zkserver.Proxy, error) {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	p, ok := pt.byConn[c]
	if !ok {
		return nil, fmt.Errorf("conn %T %#x was not opened by this backend", c, c.SessionID())
	}
	return p, nil
}

// closeAll closes every proxy; the suite has closed the Conns by then.
func (pt *proxyTable) closeAll() {
	pt.mu.Lock()
	proxies := pt.proxies
	pt.proxies, pt.byConn = nil, nil
	pt.mu.Unlock()
	for _, p := range proxies {
		p.Close()
	}
}

// disconnect cuts c's connection and returns once c has noticed.
func (pt *proxyTable) disconnect(ctx context.Context, c zksim.Conn) error {
	p, err := pt.proxy(c)
	if err != nil {
		return err
	}
	p.Cut()
	return waitFor(ctx, func() bool { return c.State() != zksim.StateConnected }, "the Conn to notice the cut")
}

// reconnect restores c's connection and returns once c is connected to its
// session again, or zksim.ErrSessionExpired once c has learnt that the
// server expired the session.
func (pt *proxyTable) reconnect(ctx context.Context, c zksim.Conn) error {
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
	return nil
}

// expire holds c's connection cut past its session timeout, so that the
// server expires the session (it checks every tick), then restores it and
// waits until c has learnt of the expiry.
func (pt *proxyTable) expire(ctx context.Context, c zksim.Conn) error {
	if err := pt.disconnect(ctx, c); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(c.SessionTimeout() + 3*realTick):
	}
	err := pt.reconnect(ctx, c)
	if err == nil {
		return fmt.Errorf("session %#x survived a cut of its whole timeout", c.SessionID())
	}
	if err == zksim.ErrSessionExpired {
		return nil
	}
	return err
}

// waitFor polls cond until it holds or ctx ends.
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
