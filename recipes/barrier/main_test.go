package barrier_test

import (
	"testing"

	bt "github.com/zksim/zksim/zktest"
)

func TestMain(m *testing.M) { bt.Main(m) }

// The backend table: the shared cases run on zkmem and on a real
// ZooKeeper; the fault cases need zkmem's controls.
func TestZkmem(t *testing.T)      { bt.RunMem(t, cases.With(faultCases)) }
func TestRealServer(t *testing.T) { bt.RunReal(t, cases) }
