package harness_test

import (
	"sync/atomic"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim/harness"
)

// Machine.ZKOptions reach the go-zookeeper client of every GoZK process.
func TestZKOptionsReachTheClients(t *testing.T) {
	var applied atomic.Int64
	m := harness.Machine[*zk.Conn]{
		Client:    harness.GoZK,
		Processes: 2,
		ZKOptions: []func(*zk.Conn){zk.WithMaxBufferSize(64 << 10), func(*zk.Conn) { applied.Add(1) }},
		New:       func(p *harness.Process[*zk.Conn]) *zk.Conn { return p.ZK() },
	}
	c := harness.Catch(t, m, harness.CatchOptions{Checks: 3}, "none")
	require.False(t, c.Caught, c.Report)
	require.Equal(t, int64(6), applied.Load(), "3 checks of 2 clients each")
}
