package zkwire_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zksim/zksim/zkwire"
)

// TestGoZookeeperLock: go-zookeeper's own zk.Lock, several clients
// contending; at most one holds it at a time, and every one gets it.
func TestGoZookeeperLock(t *testing.T) {
	srv := zkwire.NewTestServer(t)
	const clients, rounds = 5, 4
	var (
		holders atomic.Int32
		maxSeen atomic.Int32
		total   atomic.Int32
		wg      sync.WaitGroup
		errs    = make(chan error, clients*rounds)
	)
	conns := make([]*zk.Conn, clients)
	for i := range conns {
		conns[i], _ = dial(t, srv.Addr(), 10*time.Second)
	}
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func(c *zk.Conn) {
			defer wg.Done()
			l := zk.NewLock(c, "/lock", zk.WorldACL(zk.PermAll))
			for r := 0; r < rounds; r++ {
				if err := l.Lock(); err != nil {
					errs <- err
					return
				}
				n := holders.Add(1)
				for {
					m := maxSeen.Load()
					if n <= m || maxSeen.CompareAndSwap(m, n) {
						break
					}
				}
				time.Sleep(time.Millisecond)
				holders.Add(-1)
				total.Add(1)
				if err := l.Unlock(); err != nil {
					errs <- err
					return
				}
			}
		}(conns[i])
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if maxSeen.Load() != 1 {
		t.Fatalf("%d holders at once", maxSeen.Load())
	}
	if total.Load() != clients*rounds {
		t.Fatalf("%d acquisitions, want %d", total.Load(), clients*rounds)
	}
	kids, _, err := conns[0].Children("/lock")
	if err != nil || len(kids) != 0 {
		t.Fatalf("lock nodes left: %v, %v", kids, err)
	}
}
