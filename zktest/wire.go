package zktest

import (
	"context"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkwire"
)

// WireName names the wire backend: go-zookeeper over TCP to a zkwire server.
const WireName = "gozk+zkwire"

// Wire returns srv, a zkwire server, as a Backend whose sessions are gozk
// Conns over TCP, that is the path kazoo, Curator and go-zookeeper take to
// `zksim serve`. As on [OpenReal], every session goes through its own
// zkserver.Proxy, which Disconnect and Reconnect cut and restore; Expire
// is the server's own, through srv's control handle, so it returns at once
// (the Conn learns of the expiry on its next reply or reconnection). The
// proxies are closed when t ends.
func Wire(t testing.TB, srv *zkwire.TestServer) *Backend {
	t.Helper()
	proxies := newProxyTable(srv.Addr(), srv.ZK().Options().TickTime)
	t.Cleanup(proxies.closeAll)
	return &Backend{
		Name:    WireName,
		Connect: proxies.connect,
		Expire: func(_ context.Context, c zksim.Conn) error {
			ctl, err := srv.Control(c.SessionID())
			if err != nil {
				return err
			}
			ctl.Expire()
			return nil
		},
		Disconnect: proxies.disconnect,
		Reconnect:  proxies.reconnect,
		Facts:      srv.ZK().Options(),
		WireAddr:   srv.Addr(),
	}
}
