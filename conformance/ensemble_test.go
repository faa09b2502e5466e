package conformance_test

import (
	"testing"
	"time"

	"github.com/zksim/zksim/conformance"
	"github.com/zksim/zksim/zktest"
)

// TestConformanceEnsemble runs the ensemble cases on a 3-member zkmem
// ensemble, on the same served over TCP (one port per member, go-zookeeper
// clients) and on a real 3-member ZooKeeper ensemble (tickTime 100ms,
// sessions up to 10s so that they outlive elections). Outside CI without
// ZooKeeper installed the real one skips (zkserver says how to install
// it); under CI=true it must run.
func TestConformanceEnsemble(t *testing.T) {
	opts := zktest.FastOptions()
	opts.MaxSessionTimeout = 10 * time.Second
	t.Run(zktest.EnsembleMemName, func(t *testing.T) {
		conformance.RunEnsemble(t, zktest.OpenMemEnsemble(t, 3, opts))
	})
	t.Run(zktest.EnsembleWireName, func(t *testing.T) {
		conformance.RunEnsemble(t, zktest.OpenWireEnsemble(t, 3, opts))
	})
	t.Run(zktest.EnsembleRealName, func(t *testing.T) {
		conformance.RunEnsemble(t, zktest.OpenRealEnsemble(t, 3, opts))
	})
}
