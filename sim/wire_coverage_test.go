package sim_test

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// A go-zookeeper client's requests are in the coverage table as a native
// client's are: what it sent, and the faults that met it; its pings and
// the like are not.
func TestZKRequestsAreCovered(t *testing.T) {
	zkWorld(t, func(t *testing.T, w *sim.World, zc *zk.Conn, _ func() []zk.State) {
		w.Faults().LoseNextReply(1, zkmem.OpCreate)
		do(t, w, func() { _, _ = zc.Create("/x", nil, 0, zk.WorldACL(zk.PermAll)) })
		do(t, w, func() { time.Sleep(2 * time.Second); _, _, _ = zc.Children("/") }) // once reconnected
		cover := w.Coverage()
		for k, want := range map[sim.CoverageKey]int{
			{Area: "/x", Op: zkmem.OpCreate}:                       1,
			{Area: "/x", Op: zkmem.OpCreate, Fault: "LoseReply"}:   1,
			{Area: "/", Op: zkmem.OpGetChildren}:                   1,
			{Area: "/", Op: zkmem.OpGetChildren, Fault: "Shuffle"}: 0,
		} {
			if got := cover[k]; got != want {
				t.Errorf("coverage %+v = %d, want %d; table:\n%s", k, got, want, cover)
			}
		}
		for k := range cover {
			if k.Op == zkmem.OpPing || k.Op == zkmem.OpSetWatches {
				t.Errorf("coverage counts the session's upkeep: %+v", k)
			}
		}
	})
}
