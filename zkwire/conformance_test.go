package zkwire_test

import (
	"strings"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/conformance"
	"github.com/zksim/zksim/zkmem"
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
	return conformance.Backend{
		Backend: *zktest.Wire(t, srv),
		Skip: map[string]string{
			"paths/sequential-dot-name-allowed": `go-zookeeper v1.0.4 checks a sequential create of "/r/." ` +
				`as "/r/." rather than "/r/.1" and rejects it before sending (as in gozk's run on a real server)`,
		},
	}
}
