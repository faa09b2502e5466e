package clients_test

import (
	"testing"

	"github.com/zksim/zksim/zkwire"
)

// startWire starts zksim's wire server in-process for the test, with its
// control endpoint; t.Cleanup closes both.
func startWire(t *testing.T) backend {
	t.Helper()
	srv := zkwire.NewTestServer(t)
	return backend{name: "zkwire", addr: srv.Addr(), control: srv.ControlURL()}
}
