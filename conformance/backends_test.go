package conformance_test

import (
	"strings"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/conformance"
	"github.com/zksim/zksim/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

// gozkSkips are the cases go-zookeeper cannot run against a real server.
var gozkSkips = map[string]string{
	"paths/sequential-dot-name-allowed": `go-zookeeper v1.0.4 checks a sequential create of "/r/." ` +
		`as "/r/." rather than "/r/.1" and rejects it before sending; the Java client and the server accept it`,
}

// TestConformance runs the suite on zkmem and, through gozk, on a real
// ZooKeeper, both with zktest.FastOptions (tickTime 100ms, TTL nodes on).
// Outside CI without ZooKeeper installed the real half skips (zkserver
// says how to install it); under CI=true it must run.
func TestConformance(t *testing.T) {
	zktest.Run(t, zktest.FastOptions(), func(t *testing.T, b *zktest.Backend) {
		cb := conformance.Backend{Backend: *b}
		if b.Real != nil {
			cb.Skip = gozkSkips
		}
		conformance.Run(t, cb)
	})
}

// TestConformanceAuthProviders runs the "auth" cases against servers with a
// superDigest and SASL users (on the real server, a JAAS file and the SASL
// auth provider).
func TestConformanceAuthProviders(t *testing.T) {
	opts := zktest.FastOptions()
	opts.SuperDigest = zksim.DigestID("super", conformance.SuperPassword)
	opts.SASLUsers = map[string]string{"bob": "bobpw"}
	var only []string
	for _, name := range conformance.CaseNames() {
		if strings.HasPrefix(name, "auth/") {
			only = append(only, name)
		}
	}
	zktest.Run(t, opts, func(t *testing.T, b *zktest.Backend) {
		conformance.Run(t, conformance.Backend{Backend: *b, Only: only})
	})
}

// TestConformanceNoExtendedTypes runs the suite again with TTL nodes off
// (ZooKeeper's default): every case on zkmem, and on the real server only
// the cases about a server configured that way.
func TestConformanceNoExtendedTypes(t *testing.T) {
	opts := zktest.FastOptions()
	opts.ExtendedTypes = false
	zktest.Run(t, opts, func(t *testing.T, b *zktest.Backend) {
		cb := conformance.Backend{Backend: *b}
		if b.Real != nil {
			cb.Only = []string{
				"create/ttl-disabled-unimplemented",
				"create/ttl-sequential-disabled-unimplemented",
				"create/ttl-disabled-unimplemented-before-bad-ttl",
				"sequence/counts-every-mode",
			}
		}
		conformance.Run(t, cb)
	})
}
