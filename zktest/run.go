package zktest

import (
	"testing"

	"github.com/zksim/zksim/zkmem"
)

// Run runs f once on each backend, as the subtests "zkmem" and "ZooKeeper"
// of t: first on a zkmem server started with opts ([OpenMem]), then on a
// real ZooKeeper started with the configuration opts imply ([OpenReal]).
// Each backend lives as long as its subtest. Without ZooKeeper installed
// the second subtest skips outside CI and fails under CI=true.
//
// f runs in real time on both. A test that wants zkmem on virtual time
// opens it with OpenMem inside a testing/synctest bubble (as [RunMem] does
// for each of its cases).
func Run(t *testing.T, opts zkmem.Options, f func(t *testing.T, b *Backend)) {
	t.Helper()
	t.Run(MemName, func(t *testing.T) { f(t, OpenMem(t, opts)) })
	t.Run(RealName, func(t *testing.T) { f(t, OpenReal(t, opts)) })
}
