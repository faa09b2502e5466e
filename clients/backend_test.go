package clients_test

import (
	"os"
	"strings"
	"testing"

	"github.com/zksim/zksim/zkserver"
)

// backend is a server the client programs talk to.
type backend struct {
	name    string
	addr    string // host:port, ZK_ADDR
	control string // control URL, ZKSIM_CONTROL; "" for a real ZooKeeper

	extraEnv []string // more KEY=value for the programs, after the rest
}

// env is the environment of a client program: this process's, with
// ZK_ADDR and ZKSIM_CONTROL set to the backend's (ZKSIM_CONTROL removed for
// a real ZooKeeper).
func (b backend) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ZK_ADDR=") && !strings.HasPrefix(kv, "ZKSIM_CONTROL=") {
			env = append(env, kv)
		}
	}
	env = append(env, "ZK_ADDR="+b.addr)
	if b.control != "" {
		env = append(env, "ZKSIM_CONTROL="+b.control)
	}
	return append(env, b.extraEnv...)
}

// backends are the servers every client program runs against, each
// started by its constructor for the calling test.
var backends = []struct {
	name  string
	start func(t *testing.T) backend
}{
	{"zkwire", startWire},
	{"zookeeper", startZooKeeper},
}

// forEachBackend runs f as a subtest per backend.
func forEachBackend(t *testing.T, f func(t *testing.T, b backend)) {
	t.Helper()
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			f(t, bk.start(t))
		})
	}
}

// startZooKeeper returns the real ZooKeeper 3.8 the test binary shares.
func startZooKeeper(t *testing.T) backend {
	t.Helper()
	return backend{name: "zookeeper", addr: zkserver.Shared(t).Addr()}
}
