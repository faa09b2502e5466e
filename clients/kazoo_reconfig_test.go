package clients_test

import (
	"strings"
	"testing"

	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkserver"
	"github.com/zksim/zksim/zktest"
	"github.com/zksim/zksim/zkwire"
)

// kazooReconfig asks for a reconfiguration and prints the exception kazoo
// raises, waiting at most 5s for the answer.
const kazooReconfig = `
import os
from kazoo.client import KazooClient
zk = KazooClient(hosts=os.environ["ZK_ADDR"], timeout=20)
zk.start(timeout=20)
try:
    zk.reconfig_async(None, None, "server.1=127.0.0.1:2888:3888;2181", -1).get(timeout=5)
    print("reconfigured")
except Exception as err:
    print(type(err).__name__)
zk.stop()
`

// TestKazooReconfig: kazoo 2.8's reconfig against the wire server and a
// real standalone ZooKeeper configured alike. With reconfigEnabled
// (zkmem.Options.ReconfigEnabled, zksim serve -reconfigEnabled) both
// answer Unimplemented, which kazoo raises as UnimplementedError. Without
// it, the default of both, both answer ReconfigDisabled (-123), a code
// kazoo 2.8 does not know: its connection thread dies ("Invalid error
// code") and the call never completes.
func TestKazooReconfig(t *testing.T) {
	needKazoo(t)
	for _, tc := range []struct {
		name    string
		enabled bool
		want    string // what the program prints
		stderr  string // what kazoo logs, if anything
	}{
		{"reconfigEnabled", true, "UnimplementedError", ""},
		{"default", false, "KazooTimeoutError", "RuntimeError: Invalid error code"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := zkmem.Options{ReconfigEnabled: tc.enabled}
			for _, b := range []struct {
				name string
				addr func(t *testing.T) string
			}{
				{"zkwire", func(t *testing.T) string {
					return zkwire.NewTestServer(t, zkwire.WithZKOptions(opts)).Addr()
				}},
				{"zookeeper", func(t *testing.T) string {
					if !tc.enabled {
						return zkserver.Shared(t).Addr() // ZooKeeper's defaults
					}
					srvOpts, err := zktest.ServerOptions(opts)
					if err != nil {
						t.Fatal(err)
					}
					return zkserver.Start(t, srvOpts...).Addr()
				}},
			} {
				t.Run(b.name, func(t *testing.T) {
					be := backend{name: b.name, addr: b.addr(t)}
					r := run(t, be, "testdata", python, "-W", "ignore::DeprecationWarning", "-c", kazooReconfig)
					if r.code != 0 || strings.TrimSpace(r.stdout) != tc.want || !strings.Contains(r.stderr, tc.stderr) {
						t.Fatalf("kazoo reconfig against %s: want %s (and %q logged)\n%s", b.name, tc.want, tc.stderr, r)
					}
				})
			}
		})
	}
}
